<?php
/**
 * A PHP product's static files under `php -S`, served as its web server serves them in a
 * real install (Apache on Debian), so a browser caches them as it would there.
 *
 * `php -S` serves a file the router passes on (`return false`) with no Last-Modified,
 * ETag or expiry, and drops the headers the router set: the browser re-downloads every
 * stylesheet, script, font and icon on every page (Roundcube: ~1.3 MB and 20 requests a
 * page, one at a time through the single worker). Apache sends Last-Modified and an ETag
 * of the file's size and mtime (`FileETag MTime Size`) and answers a conditional request
 * with 304; a product's own configuration may add an expiry (Roundcube's .htaccess:
 * `ExpiresDefault "access plus 1 month"`). The bytes and their Content-Type are those
 * `php -S` sends, so a page looks the same; only the caching differs.
 */

/** Content types as `php -S` sends them (its mime table; text types with a charset). */
const CUA_STATIC_TYPES = [
	'css' => 'text/css; charset=UTF-8',
	'js' => 'application/javascript',
	'json' => 'application/json',
	'html' => 'text/html; charset=UTF-8',
	'less' => 'text/less; charset=UTF-8',
	'png' => 'image/png',
	'gif' => 'image/gif',
	'jpg' => 'image/jpeg',
	'svg' => 'image/svg+xml',
	'ico' => 'image/vnd.microsoft.icon',
	'woff' => 'font/woff',
	'woff2' => 'font/woff2',
	'ttf' => 'font/ttf',
	'eot' => 'application/vnd.ms-fontobject',
];

/**
 * Send `$file` (or 304 to a matching conditional GET/HEAD), or answer 404 when it is not a
 * readable regular file. `$maxAge` seconds of freshness (Cache-Control and Expires), or
 * null for none (the browser then revalidates, or reuses it by its own heuristic, as
 * behind a plain Apache). Always true: the request is answered.
 */
function cua_serve_static( string $file, ?int $maxAge ): bool {
	$stat = is_file( $file ) ? @stat( $file ) : false;
	if ( $stat === false ) {
		http_response_code( 404 );
		return true;
	}
	header_remove( 'X-Powered-By' );  // php -S sends none with a file
	$ext = strtolower( pathinfo( $file, PATHINFO_EXTENSION ) );
	$etag = sprintf( '"%x-%x"', $stat['size'], $stat['mtime'] );
	$lastModified = gmdate( 'D, d M Y H:i:s', $stat['mtime'] ) . ' GMT';
	header( 'Last-Modified: ' . $lastModified );
	header( 'ETag: ' . $etag );
	if ( $maxAge !== null ) {
		header( "Cache-Control: max-age=$maxAge" );
		header( 'Expires: ' . gmdate( 'D, d M Y H:i:s', time() + $maxAge ) . ' GMT' );
	}
	$ifNoneMatch = $_SERVER['HTTP_IF_NONE_MATCH'] ?? null;
	$ifModifiedSince = $_SERVER['HTTP_IF_MODIFIED_SINCE'] ?? null;
	$fresh = $ifNoneMatch !== null
		? in_array( $etag, array_map( 'trim', explode( ',', $ifNoneMatch ) ), true ) || trim( $ifNoneMatch ) === '*'
		: $ifModifiedSince !== null && strtotime( $ifModifiedSince ) >= $stat['mtime'];
	if ( $fresh ) {
		http_response_code( 304 );
		return true;
	}
	header( 'Content-Type: ' . ( CUA_STATIC_TYPES[$ext] ?? 'application/octet-stream' ) );
	header( 'Content-Length: ' . $stat['size'] );
	if ( ( $_SERVER['REQUEST_METHOD'] ?? 'GET' ) !== 'HEAD' ) {
		readfile( $file );
	}
	return true;
}
