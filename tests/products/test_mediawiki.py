"""MediaWiki as a real product (cua.tasks.products.mediawiki): the service speaks the app
contract, a reset restores the seed exactly, snapshots restore and fork, the activity log
sees each request's changes, the page side keeps the app host's rules, a bad configuration
is a typed error, and one oracle passes judge QA in a real browser.

Each test that starts the service runs php (MediaWiki's server) and is marked slow."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _product as harness
import httpx
import pytest

from cua.tasks.products.base import ProductConfigError
from cua.tasks.products.mediawiki import MediaWiki, build

pytestmark = pytest.mark.skipif(not Path("/usr/share/mediawiki/includes/Defines.php").is_file(),
                                reason="MediaWiki is not installed (scripts/setup.sh installs it)")



class Service(harness.Service):
    """The wiki's service, with an edit through MediaWiki's web API."""

    app = "mediawiki"

    def edit(self, title: str, text: str) -> dict[str, Any]:
        """An anonymous edit through MediaWiki's own web API (as a page's script would make it)."""
        r = httpx.post(f"{self.base}/api.php", data={"action": "edit", "title": title, "text": text, "token": "+\\",
                                                    "format": "json"}, timeout=60)
        r.raise_for_status()
        result: dict[str, Any] = r.json()
        return result


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    with harness.running(Service, tmp_path) as svc:
        yield svc


def _page(state: dict[str, Any], title: str) -> dict[str, Any]:
    return next(p for p in state["pages"] if p["title"] == title)


@pytest.mark.slow
def test_the_service_serves_real_pages_and_answers_the_contract(service: Service) -> None:
    health = service.control.get("/__cua/health").json()
    assert health == {"ok": True, "app": "mediawiki", "seed": 0}
    page = httpx.get(f"{service.base}/wiki/Main_Page", timeout=60)
    assert page.status_code == 200 and "Welcome to Riverbend Wiki" in page.text and 'id="searchInput"' in page.text
    state = service.state()
    assert len(state["pages"]) > 150 and len(state["revisions"]) > 300 and len(state["users"]) > 8
    assert {"sysop", "bureaucrat"} <= {g for u in state["users"] for g in u["groups"]}
    assert {(r["type"], r["action"]) for r in state["logs"]} >= {("move", "move"), ("delete", "delete"),
                                                                  ("protect", "protect")}
    assert any(p["is_redirect"] and p["redirect_to"] for p in state["pages"])
    assert any(p["namespace"] == 1 for p in state["pages"]) and state["watched"] and state["deleted"]


@pytest.mark.slow
def test_the_page_side_keeps_the_app_host_rules(service: Service) -> None:
    assert httpx.get(f"{service.base}/__cua/state", timeout=30).status_code == 404
    assert httpx.get(f"{service.base}/wiki/Main_Page", headers={"Host": "evil.example"}, timeout=30).status_code == 403
    foreign = httpx.post(f"{service.base}/api.php", data={"action": "edit", "title": "Millbrook", "text": "x",
                                                         "token": "+\\", "format": "json"},
                         headers={"Origin": "http://127.0.0.1:1"}, timeout=30)
    assert foreign.status_code == 403
    assert httpx.get(f"{service.base}/mw-config/index.php", timeout=30).status_code == 404  # no web installer
    assert httpx.get(f"{service.base}/maintenance/update.php", timeout=30).status_code == 404


@pytest.mark.slow
def test_reset_puts_the_seed_back_byte_for_byte(service: Service) -> None:
    before = service.state()
    image = service.snapshot()
    result = service.edit("Millbrook", "Vandalised [[Category:Nonsense]]")
    assert result["edit"]["result"] == "Success"
    edited = service.state()
    page = _page(edited, "Millbrook")
    assert page["text"] == "Vandalised [[Category:Nonsense]]" and page["categories"] == ["Nonsense"]
    log = service.sql("SELECT request, changes FROM cua_activity ORDER BY seq")
    assert log and log[-1]["request"].startswith("POST /api.php") and "Nonsense" in log[-1]["changes"]
    reset = service.control.post("/__cua/reset", json={"seed": 0})
    assert reset.status_code == 200
    assert harness.dump(service.state()) == harness.dump(before)
    assert harness.image_content(service.snapshot()) == harness.image_content(image)
    assert service.sql("SELECT count(*) AS n FROM cua_activity") == [{"n": 0}]
    assert "Vandalised" not in httpx.get(f"{service.base}/wiki/Millbrook", timeout=60).text


@pytest.mark.slow
def test_an_edit_undone_stays_in_the_history(service: Service) -> None:
    old = _page(service.state(), "Millbrook")["text"]
    service.edit("Millbrook", "spam")
    service.edit("Millbrook", old)
    state = service.state()
    assert _page(state, "Millbrook")["text"] == old  # the end state hides it...
    changes = [json.loads(r["changes"]) for r in service.sql("SELECT changes FROM cua_activity ORDER BY seq")]
    assert len(changes) == 2 and "spam" in json.dumps(changes[0])  # ...the activity log does not
    assert sum(1 for r in state["revisions"] if r["page_id"] == _page(state, "Millbrook")["id"]) >= 3


@pytest.mark.slow
def test_snapshot_restore_and_fork_keep_the_wiki(service: Service, tmp_path: Path) -> None:
    service.edit("Old Harbour", "Snapshot me")
    image = service.snapshot()
    at_snapshot = service.state()
    service.control.post("/__cua/reset", json={"seed": 0}).raise_for_status()
    assert _page(service.state(), "Old Harbour")["text"] != "Snapshot me"
    assert service.restore(image).status_code == 200
    assert harness.dump(service.state()) == harness.dump(at_snapshot)
    assert "Snapshot me" in httpx.get(f"{service.base}/wiki/Old_Harbour", timeout=60).text
    fork = Service(tmp_path, name="fork")  # a fork: another instance given the same image
    try:
        assert fork.restore(image).status_code == 200
        assert harness.dump(fork.state()) == harness.dump(at_snapshot)
        fork.edit("Old Harbour", "Only in the fork")
        assert _page(service.state(), "Old Harbour")["text"] == "Snapshot me"
    finally:
        fork.close()
    harness.assert_a_bad_image_changes_nothing(service)


@pytest.mark.slow
def test_an_image_from_judge_qa_copy_runs_in_the_live_wiki(service: Service) -> None:
    """Judge QA's page probes write the in-process copy's image (no search index, no
    caches) into the live instance: the wiki must still serve, search and log in."""
    harness.assert_takes_the_copys_image(service, MediaWiki())
    page = httpx.get(f"{service.base}/index.php", params={"search": "Millbrook", "title": "Special:Search"},
                     timeout=60, follow_redirects=True)
    assert page.status_code == 200 and "Millbrook" in page.text


@pytest.mark.slow
def test_bad_configuration_is_a_typed_error(tmp_path: Path) -> None:
    harness.assert_refuses_bad_configuration("mediawiki", tmp_path, {"CUA_MEDIAWIKI_PATH": str(tmp_path / "nowhere")},
                                             "MediaWiki is not installed")
    bad_seed = harness.serve_fails("mediawiki", tmp_path, "--seed", "-3", "--port", "0")
    assert bad_seed.returncode == os.EX_USAGE and "seed" in bad_seed.stderr
    with pytest.raises(ProductConfigError):
        MediaWiki().reset(-1)


@pytest.mark.slow
def test_the_committed_schema_is_the_installed_one() -> None:
    installed = re.sub(r"\bBLOB\b", "TEXT", harness.installed_schema(build.template_image(),
                                                                    MediaWiki.private_tables))
    committed = MediaWiki.schema[MediaWiki.schema.index("CREATE"):]
    assert committed == installed


@pytest.mark.slow
def test_an_oracle_passes_judge_qa_in_a_real_browser() -> None:
    harness.assert_oracle_passes_judge_qa("wiki_mediawiki.add_category@1",
                                          ("schema_mutation", "history", "forged_signal", "collateral", "duplicate"))


def test_state_views_resolve_titles_and_text() -> None:
    from cua.tasks.products.mediawiki import full_title

    assert full_title(0, "Millbrook_Park") == "Millbrook Park"
    assert full_title(1, "Millbrook_Park") == "Talk:Millbrook Park"
    assert full_title(14, "Parks") == "Category:Parks"


def test_wikitext_that_opens_with_a_heading_is_no_formula() -> None:
    """Judge QA's equivalent probe took a talk page ("== Sources ==...") for a spreadsheet
    formula and lower-cased it as "the same" end state; a formula still gets its variant."""
    from cua.qa.probes import equivalent_spellings

    assert not equivalent_spellings("old_text", "== Sources ==\nDoes anyone know?")
    assert [w for w, _ in equivalent_spellings("formula", "=SUM(A1:A3)")] == ["formula in lower case, spaced"]
