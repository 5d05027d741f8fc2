#!/bin/sh
# Runs inside the image's chroot after the packages are installed.
set -eu

# The desktop user that the apps and the guest agent run as (uid 1000, no password).
if ! id user >/dev/null 2>&1; then
    useradd --create-home --uid 1000 --shell /bin/bash user
fi
mkdir -p /home/user/Desktop /home/user/Documents
chown -R user:user /home/user

echo cua-vm > /etc/hostname
printf '127.0.0.1 localhost\n127.0.1.1 cua-vm\n' > /etc/hosts
printf '/dev/vda / ext4 rw,noatime 0 1\n' > /etc/fstab

# A small initrd that loads the virtio modules listed in the manifest ($CUA_INITRD_MODULES),
# in order, rather than every module the generic policy would pick.
sed -i 's/^MODULES=.*/MODULES=list/' /etc/initramfs-tools/initramfs.conf
sed -i 's/^COMPRESS=.*/COMPRESS=gzip/' /etc/initramfs-tools/initramfs.conf
: > /etc/initramfs-tools/modules
for m in $CUA_INITRD_MODULES; do echo "$m" >> /etc/initramfs-tools/modules; done
update-initramfs -u -k all

# Openbox without decorations' title fonts fetched from the network, and no menus that
# need packages we do not ship.
mkdir -p /home/user/.config/openbox
cp /etc/xdg/openbox/rc.xml /home/user/.config/openbox/rc.xml
chown -R user:user /home/user/.config

# Font caches built now, not by the first app at every cold boot (seconds under TCG).
fc-cache -f >/dev/null 2>&1 || true

# Keep the image small.
apt-get clean
rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* /usr/share/info/* /var/cache/debconf/*-old
find /usr/share/locale -mindepth 1 -maxdepth 1 ! -name 'en*' ! -name 'locale.alias' -exec rm -rf {} +
