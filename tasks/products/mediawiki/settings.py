"""The LocalSettings.php of one MediaWiki instance (or of an image build): its data folder,
the shared localisation cache, and no cache that could outlive a reset.

What survives a reset is only what the database holds: the object, parser and message
caches are off (`CACHE_NONE`); sessions and the stash live in the instance's own database
(`objectcache`), so a reset, a snapshot or a fork carries them with the pages; the job
queue is the database's `job` table and never runs in a request (`$wgJobRunRate = 0`;
nothing the tasks judge waits on a job). The localisation cache is read-only, built once
per MediaWiki version beside the images (`manualRecache`), as PHP arrays that OPcache
keeps compiled."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["SITE_NAME", "local_settings"]

SITE_NAME = "Riverbend Wiki"

_TEMPLATE = r"""<?php
// Written by cua.tasks.products.mediawiki.settings: one instance's configuration.
if ( !defined( 'MEDIAWIKI' ) ) {
	exit;
}
require_once "$IP/includes/PlatformSettings.php";
$wgSitename = __SITE__;
$wgMetaNamespace = "Riverbend_Wiki";
$wgScriptPath = "";
// the page's own loopback host and port (the router refused any other Host)
$wgServer = 'http://' . ( ( PHP_SAPI === 'cli-server' && isset( $_SERVER['HTTP_HOST'] ) ) ? $_SERVER['HTTP_HOST'] : '127.0.0.1' );
$wgArticlePath = "/wiki/$1";
$wgResourceBasePath = $wgScriptPath;
$wgLogos = [ '1x' => "$wgResourceBasePath/resources/assets/change-your-logo.svg",
	'icon' => "$wgResourceBasePath/resources/assets/change-your-logo-icon.svg" ];
$wgEnableEmail = false;
$wgEnableUserEmail = false;
$wgEmailAuthentication = false;
$wgDBtype = "sqlite";
$wgDBserver = "";
$wgDBname = "wikidb";
$wgDBuser = "";
$wgDBpassword = "";
$wgSQLiteDataDir = __DATA__;
$wgMainCacheType = CACHE_NONE;
$wgParserCacheType = CACHE_NONE;
$wgMessageCacheType = CACHE_NONE;
$wgSessionCacheType = CACHE_DB;
$wgObjectCaches[CACHE_DB] = [ 'class' => SqlBagOStuff::class, 'loggroup' => 'SQLBagOStuff' ];
$wgMainStash = CACHE_DB;
$wgLocalisationCacheConf['store'] = 'array';
$wgLocalisationCacheConf['storeDirectory'] = __L10N__;
$wgLocalisationCacheConf['manualRecache'] = __MANUAL__;
$wgCacheDirectory = false;
$wgJobRunRate = 0;
$wgRCMaxAge = 20 * 365 * 86400;
$wgRateLimits = [];
$wgEnableUploads = false;
$wgUseInstantCommons = false;
$wgPingback = false;
$wgLanguageCode = "en";
$wgLocaltimezone = "UTC";
$wgSecretKey = "5b0f5e3b6d1c4a7e9f2a8c1d3e5f7a9b0c2d4e6f8a1b3c5d7e9f0a2b4c6d8e0f";
$wgAuthenticationTokenVersion = "1";
$wgUpgradeKey = "cua0mediawiki00";
$wgRightsText = "";
$wgDiff3 = "/usr/bin/diff3";
$wgShowExceptionDetails = true;
$wgDefaultUserOptions['watchdefault'] = 0;
$wgDefaultUserOptions['watchcreations'] = 0;
$wgDefaultUserOptions['watchmoves'] = 0;
$wgDefaultUserOptions['watchdeletion'] = 0;
$wgGroupPermissions['*']['createaccount'] = false;
$wgExtensionDirectory = "$IP/extensions-core";  // Debian links $IP/extensions through /var/lib, which a container does not see
$wgDefaultSkin = "vector";
wfLoadSkin( 'Vector' );
wfLoadExtension( 'ParserFunctions' );
wfLoadExtension( 'Cite' );
wfLoadExtension( 'WikiEditor' );
__HOOK__
"""

#: After each web request (post-send updates included), tell the control side which
#: request ran, so it can log what the request changed (the activity log).
_HOOK = r"""
if ( PHP_SAPI === 'cli-server' ) {
	register_shutdown_function( static function () {
		$request = ( $_SERVER['REQUEST_METHOD'] ?? 'GET' ) . ' ' . ( $_SERVER['REQUEST_URI'] ?? '/' );
		$body = json_encode( [ 'request' => $request ] );
		$fp = @stream_socket_client( 'unix://' . __SOCKET__, $errno, $errstr, 30 );
		if ( $fp ) {
			stream_set_timeout( $fp, 30 );
			fwrite( $fp, "POST /__cua/activity HTTP/1.1\r\nHost: cua\r\nContent-Type: application/json\r\n" .
				"Content-Length: " . strlen( $body ) . "\r\nConnection: close\r\n\r\n" . $body );
			stream_get_contents( $fp );
			fclose( $fp );
		}
	} );
}
"""


def _php(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid PHP double-quoted string for these paths


def local_settings(data_dir: Path, l10n_dir: Path, *, control_socket: str | None, manual_recache: bool = True) -> str:
    """The settings text; `control_socket`: the control side's socket (None: an image build,
    which logs nothing)."""
    hook = _HOOK.replace("__SOCKET__", _php(control_socket)) if control_socket else ""
    return (_TEMPLATE.replace("__SITE__", _php(SITE_NAME)).replace("__DATA__", _php(str(data_dir)))
            .replace("__L10N__", _php(str(l10n_dir))).replace("__MANUAL__", "true" if manual_recache else "false")
            .replace("__HOOK__", hook))
