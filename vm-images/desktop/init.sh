#!/bin/sh
# PID 1 of the cua desktop VM. No systemd and no display manager: mount the basics, start
# the guest agent (which starts Xvfb and the window manager) as the desktop user, then reap
# children.
# Kernel command line parameters read here:
#   cua.screen=WxH       screen size (default 1280x720)
#   cua.port=NAME        virtio-serial port name of the guest agent (default cua.agent)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
umask 022

mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mountpoint -q /dev/pts || mount -t devpts -o gid=5,mode=620 devpts /dev/pts
mountpoint -q /dev/shm || mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mountpoint -q /run || mount -t tmpfs -o mode=755 tmpfs /run
mountpoint -q /tmp || mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -o remount,rw / 2>/dev/null
hostname cua-vm
# The X server runs as the desktop user and cannot make its socket folder itself.
mkdir -p /tmp/.X11-unix && chmod 1777 /tmp/.X11-unix
# Loopback: apps in the guest talk to local servers (a task's mail server, a web app).
ip link set lo up || echo "cua init: loopback is down (ip link set lo up failed)" > /dev/console

SCREEN=1280x720
PORT=cua.agent
for arg in $(cat /proc/cmdline); do
    case "$arg" in
        cua.screen=*) SCREEN=${arg#cua.screen=} ;;
        cua.port=*) PORT=${arg#cua.port=} ;;
    esac
done

modprobe virtio_console 2>/dev/null
# No udev: give virtio-serial ports their /dev/virtio-ports/NAME links ourselves.
mkdir -p /dev/virtio-ports
for d in /sys/class/virtio-ports/vport*; do
    [ -e "$d/name" ] || continue
    ln -sf "/dev/${d##*/}" "/dev/virtio-ports/$(cat "$d/name")"
    chown 1000:1000 "/dev/${d##*/}"
done

export HOME=/home/user USER=user LOGNAME=user DISPLAY=:0 XDG_RUNTIME_DIR=/run/user/1000
mkdir -p "$XDG_RUNTIME_DIR" && chown 1000:1000 "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
as_user() { setpriv --reuid=1000 --regid=1000 --init-groups -- "$@"; }

# A session bus for the apps (mousepad, pcmanfm), inherited by everything the agent starts.
eval "$(as_user dbus-launch --sh-syntax)"
export DBUS_SESSION_BUS_ADDRESS

# The guest agent starts Xvfb (ready through -displayfd) and the window manager, waits
# until the window manager owns the screen, then serves the host on the virtio-serial port.
AGENT_DEV=/dev/virtio-ports/$PORT
cd "$HOME"
# If the agent ends, say so on the console (the host shows its tail in boot errors) and
# power off: a VM without its agent serves nothing, and QEMU's exit tells the host at
# once (else a boot would wait out its whole timeout for a hello that never comes).
(
    as_user python3 -I /opt/cua/guest --listen "serial:$AGENT_DEV" --start-x "$SCREEN" --wm openbox \
        --home "$HOME" >/tmp/agent.log 2>&1
    echo "cua-init: the guest agent exited with status $?; its log:"
    tail -n 30 /tmp/agent.log
    echo "cua-init: powering off"
    sync
    echo o >/proc/sysrq-trigger
) >/dev/console 2>&1 &
echo "cua-init: started screen=$SCREEN agent=$AGENT_DEV" >/dev/console

# PID 1 must reap orphans forever; `wait` returns at once when no child is left, and the
# sleep keeps that case from spinning.
while :; do wait; sleep 1; done
