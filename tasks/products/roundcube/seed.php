<?php
/**
 * Seeds one Roundcube database through Roundcube's own code (cua.tasks.products.roundcube):
 * each user as Roundcube creates one at first login (rcube_user::create, with its default
 * identity), then the identity's name, further identities, the address book (rcube_contacts)
 * and its groups. The plan is JSON on stdin (build.py writes it from content.plan(seed)).
 *
 *   ROUNDCUBE_CONFIG_DIR=<build config> php seed.php < plan.json
 */

define( 'INSTALL_PATH', '/usr/share/roundcube/' );
require_once INSTALL_PATH . 'program/include/clisetup.php';

$plan = json_decode( stream_get_contents( STDIN ), true, 64, JSON_THROW_ON_ERROR );
$rc = rcmail::get_instance();
$host = $plan['host'];
foreach ( $plan['users'] as $u ) {
	$user = rcube_user::create( $u['email'], $host );
	if ( !$user ) {
		fwrite( STDERR, "cannot create user {$u['email']}\n" );
		exit( 1 );
	}
	$rc->user = $user;
	foreach ( $user->list_identities() as $identity ) {
		$user->update_identity( $identity['identity_id'], [ 'name' => $u['name'], 'email' => $u['email'],
			'organization' => 'Harborview Logistics', 'signature' => "{$u['name']}\n{$u['role']}, Harborview Logistics" ] );
	}
	foreach ( $u['identities'] as $identity ) {
		$user->insert_identity( $identity + [ 'organization' => 'Harborview Logistics' ] );
	}
	$user->save_prefs( $u['prefs'], true );
	$book = new rcube_contacts( $rc->get_dbh(), $user->ID );
	$ids = [];
	foreach ( $u['contacts'] as $c ) {
		$id = $book->insert( [ 'name' => $c['name'], 'firstname' => $c['firstname'], 'surname' => $c['surname'],
			'email' => $c['email'], 'organization' => $c['organization'], 'phone:work' => $c['phone'] ] );
		if ( !$id ) {
			fwrite( STDERR, "cannot add contact {$c['email']}\n" );
			exit( 1 );
		}
		$ids[$c['email']] = $id;
	}
	foreach ( $u['groups'] as $name => $members ) {
		$group = $book->create_group( $name );
		$book->add_to_group( $group['id'], array_map( static fn ( $e ) => $ids[$e], $members ) );
	}
}
echo "seeded " . count( $plan['users'] ) . " users\n";
