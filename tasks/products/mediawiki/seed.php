<?php
/**
 * Carries out a seeded plan (cua.tasks.products.mediawiki.content) through MediaWiki's own
 * code: users created and promoted, pages edited, moved, deleted, protected and watched,
 * each at the plan's (fake) time, so every table is what the product writes itself.
 *
 * php seed.php --plan PLAN.json   (MW_INSTALL_PATH and MW_CONFIG_FILE in the environment)
 */

use MediaWiki\MediaWikiServices;
use MediaWiki\Revision\SlotRecord;
use Wikimedia\Timestamp\ConvertibleTimestamp;

require_once getenv( 'MW_INSTALL_PATH' ) . '/maintenance/Maintenance.php';

class CuaSeed extends Maintenance {
	public function __construct() {
		parent::__construct();
		$this->addOption( 'plan', 'the plan (JSON)', true, true );
		$this->addOption( 'password', 'every user\'s password', true, true );
	}

	private function user( string $name ): User {
		$user = User::newFromName( $name );
		if ( !$user || !$user->getId() ) {
			$this->fatalError( "unknown user $name" );
		}
		return $user;
	}

	private function title( string $text ): Title {
		$title = Title::newFromText( $text );
		if ( !$title ) {
			$this->fatalError( "bad title $text" );
		}
		return $title;
	}

	private function settle(): void {
		DeferredUpdates::doUpdates();
		MediaWikiServices::getInstance()->getDBLoadBalancerFactory()->commitPrimaryChanges( __METHOD__ );
	}

	public function execute() {
		$plan = json_decode( file_get_contents( $this->getOption( 'plan' ) ), true );
		$password = $this->getOption( 'password' );
		mt_srand( (int)$plan['seed'] );
		$services = MediaWikiServices::getInstance();
		$groups = $services->getUserGroupManager();
		foreach ( $plan['users'] as $u ) {
			ConvertibleTimestamp::setFakeTime( (int)$u['time'] );
			$user = User::newFromName( $u['name'] );
			if ( !$user->getId() ) {
				$user->addToDatabase();
				$status = $user->changeAuthenticationData( [
					'username' => $u['name'], 'password' => $password, 'retype' => $password ] );
				if ( !$status->isGood() ) {
					$this->fatalError( "password for {$u['name']}: " . $status->getWikiText() );
				}
				$user->saveSettings();
				$log = new ManualLogEntry( 'newusers', 'create' );
				$log->setPerformer( $user );
				$log->setTarget( $user->getUserPage() );
				$log->setParameters( [ '4::userid' => $user->getId() ] );
				$log->insert();
			}
			foreach ( $u['groups'] as $g ) {
				$groups->addUserToGroup( $user, $g );
			}
			if ( $u['groups'] ) {
				$log = new ManualLogEntry( 'rights', 'rights' );
				$log->setPerformer( $this->user( 'Admin' ) );
				$log->setTarget( $user->getUserPage() );
				$log->setParameters( [ '4::oldgroups' => [], '5::newgroups' => $u['groups'] ] );
				$log->insert();
			}
			$this->settle();
		}
		foreach ( $plan['actions'] as $a ) {
			ConvertibleTimestamp::setFakeTime( (int)$a['time'] );
			$user = $this->user( $a['user'] );
			$title = $this->title( $a['title'] );
			$page = $services->getWikiPageFactory()->newFromTitle( $title );
			switch ( $a['op'] ) {
				case 'edit':
					$content = ContentHandler::makeContent( $a['text'], $title );
					$flags = ( $a['minor'] ? EDIT_MINOR : 0 ) |
						( in_array( 'bot', $groups->getUserGroups( $user ) ) ? EDIT_FORCE_BOT : 0 );
					$status = $page->doUserEditContent( $content, $user, $a['summary'], $flags );
					break;
				case 'move':
					$mp = $services->getMovePageFactory()->newMovePage( $title, $this->title( $a['to'] ) );
					$status = $mp->move( $user, $a['reason'], (bool)$a['redirect'] );
					break;
				case 'delete':
					$dp = $services->getDeletePageFactory()->newDeletePage( $page, $user );
					$status = $dp->deleteUnsafe( $a['reason'] );
					break;
				case 'protect':
					$cascade = false;
					$status = $page->doUpdateRestrictions(
						[ 'edit' => $a['edit'], 'move' => $a['move'] ],
						[ 'edit' => 'infinity', 'move' => 'infinity' ], $cascade, $a['reason'], $user );
					break;
				case 'watch':
					$services->getWatchlistManager()->addWatchIgnoringRights( $user, $title );
					$status = Status::newGood();
					break;
				default:
					$this->fatalError( "unknown op {$a['op']}" );
			}
			if ( !$status->isOK() ) {
				$this->fatalError( "{$a['op']} {$a['title']}: " . $status->getWikiText() );
			}
			$this->settle();
		}
		ConvertibleTimestamp::setFakeTime( false );
	}
}

$maintClass = CuaSeed::class;
require_once RUN_MAINTENANCE_IF_MAIN;
