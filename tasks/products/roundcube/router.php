<?php
/**
 * The router of one Roundcube instance under `php -S` (cua.tasks.products.roundcube).
 *
 * It holds the page side to the app contract's rules (cua.tasks.apps.base.AppHostGuard):
 * no control endpoints on TCP, a loopback Host only (no DNS-rebound page), no state
 * change from a page of another origin, and another origin's page may only navigate here
 * by GET. It runs Roundcube's one entry point (index.php) and serves its static files;
 * nothing else under the docroot runs (not the installer, not the plugins' PHP files).
 * `/.cua-idle` answers 204 at once: the single-worker server reaches it only after the
 * request before it has finished, post-send updates included (the control side's barrier).
 */

$method = $_SERVER['REQUEST_METHOD'] ?? 'GET';
$path = parse_url( $_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH ) ?: '/';

function cua_refuse( int $status, string $why ): bool {
	http_response_code( $status );
	header( 'Content-Type: application/json' );
	echo json_encode( [ 'error' => $why ] );
	return true;
}

if ( str_starts_with( $path, '/__cua/' ) ) {
	return cua_refuse( 404, 'not found' );
}
$host = strtolower( $_SERVER['HTTP_HOST'] ?? '' );
$hostname = preg_replace( '/:\d+$/', '', $host );
if ( !in_array( $hostname, [ '127.0.0.1', 'localhost', '[::1]' ], true ) ) {
	return cua_refuse( 403, "host $host is not loopback" );
}
$origin = $_SERVER['HTTP_ORIGIN'] ?? null;
$safe = in_array( $method, [ 'GET', 'HEAD', 'OPTIONS' ], true );
if ( !$safe && $origin !== null && strtolower( $origin ) !== "http://$host" ) {
	return cua_refuse( 403, 'a page of another origin may not change this app' );
}
$site = strtolower( $_SERVER['HTTP_SEC_FETCH_SITE'] ?? '' );
$mode = strtolower( $_SERVER['HTTP_SEC_FETCH_MODE'] ?? '' );
if ( in_array( $site, [ 'cross-site', 'same-site' ], true ) && !( $mode === 'navigate' && in_array( $method, [ 'GET', 'HEAD' ], true ) ) ) {
	return cua_refuse( 403, "another origin's page may only navigate to this app" );
}
if ( $path === '/.cua-idle' ) {
	http_response_code( 204 );
	return true;
}
if ( $path === '/' || $path === '/index.php' ) {
	return false;  // Roundcube's one entry point
}
$file = rawurldecode( $path );
if ( preg_match( '#^/(skins|plugins|program/js|program/resources)/[^\0]*\.(css|js|json|png|svg|gif|jpg|ico|woff2?|ttf|eot|less|html)$#', $file )
	&& !str_contains( $file, '..' ) ) {
	// A static file, with the caching Roundcube's .htaccess asks of Apache (a month).
	require_once __DIR__ . '/../static.php';
	return cua_serve_static( $_SERVER['DOCUMENT_ROOT'] . $file, 30 * 86400 );
}
if ( $path === '/favicon.ico' ) {
	http_response_code( 204 );
	return true;
}
return cua_refuse( 404, 'not found' );
