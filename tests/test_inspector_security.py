"""The inspector's security over real HTTP: no page without a token, one namespace never sees
another's data on any route, CSRF and cross-site posts are refused, admin pages refuse
namespace tokens, output is escaped, the session cookie's attributes, sign-in over plain HTTP
from another machine is refused while loopback and a TLS proxy work."""

from __future__ import annotations

import re
from types import SimpleNamespace

import httpx
import pytest

from recall_testkit.inspector import (admin_token, backends, database, run, signed_in,
                                      start_server, store_all)
from recall_core.server.inspector import Inspector
from recall_testkit.serverproc import recall_cli

SCRIPT = "<script>alert('pwned')</script> is what I typed"


@pytest.fixture(scope="module", params=backends())
def srv(request, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"insec-{request.param}")
    db, cleanup = database(request.param, work)
    # A name besides loopback, to play a remote browser and a TLS proxy in front.
    server = start_server(work, db, RECALL_ALLOWED_HOSTS='["recall.example.com"]')
    server.cleanup = cleanup
    server.alice, server.bob = server.token("alice"), server.token("bob")
    server.admin = admin_token(server)
    run(store_all(server, server.alice, ["Alice's locker code is 4711.", "I live in Berlin.",
                                         "I moved to Lisbon.", SCRIPT]))
    run(store_all(server, server.bob, ["Bob's bike is red."]))
    server.fail_flag.write_text("on")
    try:
        server.alice_failed_job = run(store_all(server, server.alice, ["Alice's failing job."]))[0]
    finally:
        server.fail_flag.unlink()
    yield server
    server.stop()
    server.cleanup()


def client(srv, token: str | None = None, **headers: str) -> httpx.Client:
    """Signed in with `token` through /ui/signin (`.csrf` holds its forms' CSRF value), or
    anonymous."""
    if token:
        return signed_in(srv, token, **headers)
    return httpx.Client(base_url=srv.base, headers={"Origin": srv.base, **headers},
                        follow_redirects=False)


def memory_ids(srv, token: str) -> list[str]:
    html = client(srv, token).get("/ui/memories", params={"state": "all"}).text
    return re.findall(r'/ui/memories/([0-9a-f-]{36})', html)


def all_routes() -> list[tuple[str, str]]:
    """(method, path) of every inspector route, read from its router."""
    inspector = Inspector(SimpleNamespace(storage=None, service=None), None, None)  # type: ignore[arg-type]
    return sorted({(m, "/ui" + r.path) for r in inspector.routes()
                   if getattr(r, "methods", None) for m in r.methods if m != "HEAD"})


def test_route_table_is_complete():
    routes = all_routes()
    assert ("GET", "/ui/memories/{id}") in routes and ("POST", "/ui/admin/erase") in routes
    assert len(routes) >= 17, routes


def test_no_page_without_a_token(srv):
    anon = client(srv)
    for method, path in all_routes():
        url = path.replace("{id}", "x")
        if path in ("/ui/signin",):
            continue
        r = anon.request(method, url, data={"ns": "alice"} if method == "POST" else None)
        if method == "GET":
            # The OAuth consent page sends people to sign in and back to itself (only there).
            back = "?next=%2Fui%2Foauth%2Fconsent" if path == "/ui/oauth/consent" else ""
            assert r.status_code == 303 and r.headers["location"] == "/ui/signin" + back, (
                method, path)
        elif path == "/ui/signout":
            assert r.status_code == 303
        else:
            assert r.status_code == 401, (method, path, r.status_code)
        assert "4711" not in r.text


def test_a_namespace_never_sees_another(srv):
    alice_ids = memory_ids(srv, srv.alice)
    assert len(alice_ids) >= 4
    bob = client(srv, srv.bob)
    csrf = bob.csrf
    for method, path in all_routes():
        if path in ("/ui/signin", "/ui/signout", "/ui/"):
            continue
        for ident in [alice_ids[0], srv.alice_failed_job]:
            url = path.replace("{id}", ident)
            for params in ({"ns": "alice"}, {}):
                if method == "GET":
                    r = bob.get(url, params=params)
                else:
                    r = bob.post(url, data={"csrf": csrf, **params})
                # ns=alice: not found; bob's own pages (no ns) answer, without alice's data.
                allowed = (303, 400, 404) if params else (200, 303, 400, 404)
                assert r.status_code in allowed, (method, url, params, r.status_code)
                assert "4711" not in r.text and "Lisbon" not in r.text, (method, url, params)
                if r.status_code == 303:  # only to bob's own pages
                    assert "alice" not in r.headers["location"]
    # Nothing of alice's changed.
    assert memory_ids(srv, srv.alice) == alice_ids
    queue = client(srv, srv.alice).get("/ui/queue", params={"status": "failed"}).text
    assert "Alice&#39;s failing job." in queue or "Alice's failing job." in queue


def test_admin_pages_refuse_namespace_tokens(srv):
    bob = client(srv, srv.bob)
    for method, path in all_routes():
        if not path.startswith("/ui/admin"):
            continue
        r = bob.request(method, path, params={"ns": "bob"},
                        data={"csrf": bob.csrf, "ns": "bob", "confirm": "bob"}
                        if method == "POST" else None)
        assert r.status_code == 404, (method, path, r.status_code)
    assert client(srv, srv.bob).get("/ui/memories").status_code == 200  # bob still has data


def test_csrf_and_cross_site_posts_are_refused(srv):
    bob_id, = memory_ids(srv, srv.bob)
    url = f"/ui/memories/{bob_id}/forget"
    bob = client(srv, srv.bob)
    assert bob.post(url).status_code == 403
    assert bob.post(url, data={"csrf": "0" * 40}).status_code == 403
    assert bob.post(url, data={"csrf": client(srv, srv.alice).csrf}).status_code == 403
    # another session of bob's has its own CSRF value
    assert bob.post(url, data={"csrf": client(srv, srv.bob).csrf}).status_code == 403
    evil = client(srv, srv.bob, Origin="https://evil.example")
    assert evil.post(url, data={"csrf": evil.csrf}).status_code == 403
    assert memory_ids(srv, srv.bob) == [bob_id], "a refused post changed nothing"
    signin = client(srv, Origin="https://evil.example").post("/ui/signin",
                                                              data={"token": srv.bob})
    assert signin.status_code == 403 and "set-cookie" not in signin.headers
    assert bob.post("/ui/signout").status_code == 403  # no forced sign-out
    out = bob.post("/ui/signout", data={"csrf": bob.csrf})
    assert out.status_code == 303 and 'recall_ui=""' in out.headers["set-cookie"]
    again = client(srv, srv.bob)
    ok = again.post(url, data={"csrf": again.csrf})
    assert ok.status_code == 303 and memory_ids(srv, srv.bob) == []


def test_output_is_escaped(srv):
    alice = client(srv, srv.alice)
    html = alice.get("/ui/memories").text
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in html
    assert "<script>alert" not in html
    search = alice.get("/ui/search", params={"query": "<script>alert typed"}).text
    assert "<script>alert" not in search and "&lt;script&gt;" in search
    assert "script-src 'self'" in alice.get("/ui/memories").headers["content-security-policy"]


def test_session_cookie_and_sign_in_transport(srv):
    r = client(srv).post("/ui/signin", data={"token": srv.alice})
    assert r.status_code == 303 and r.headers["location"] == "/ui/memories"
    cookie = r.headers["set-cookie"]
    for attribute in ("HttpOnly", "Path=/ui", "SameSite=strict", "Secure"):
        assert attribute in cookie, cookie
    assert srv.alice not in r.headers["location"]
    bad = client(srv).post("/ui/signin", data={"token": "rcl_nope"})
    assert bad.status_code == 401 and "set-cookie" not in bad.headers
    # Plain HTTP from another machine: the token would travel in clear, so no sign-in.
    remote = client(srv, Host="recall.example.com", Origin="http://recall.example.com")
    refused = remote.post("/ui/signin", data={"token": srv.alice})
    assert refused.status_code == 400 and "set-cookie" not in refused.headers
    assert "TLS" in remote.get("/ui/signin").text
    # Behind a TLS proxy on this machine (uvicorn trusts X-Forwarded-* from loopback).
    proxied = client(srv, Host="recall.example.com", Origin="https://recall.example.com",
                     **{"X-Forwarded-Proto": "https"})
    assert proxied.post("/ui/signin", data={"token": srv.alice}).status_code == 303


def test_revoking_a_token_ends_its_session(srv):
    carol = srv.token("carol")
    browser = client(srv, carol)
    assert browser.get("/ui/memories").status_code == 200
    recall_cli("revoke-token", carol, "--db", srv.db, env=srv.env)
    r = browser.get("/ui/memories")
    assert r.status_code == 303 and r.headers["location"] == "/ui/signin"


# -- sessions (issue 28) ------------------------------------------------------------------
def test_the_cookie_is_a_session_not_the_token(srv):
    r = client(srv).post("/ui/signin", data={"token": srv.alice})
    assert r.status_code == 303
    cookie = r.headers["set-cookie"]
    assert srv.alice not in cookie and "rcl_" not in cookie
    # The token itself as a cookie opens nothing (it did before sessions).
    raw = client(srv)
    raw.cookies.set("recall_ui", srv.alice, domain="127.0.0.1", path="/ui")
    assert raw.get("/ui/memories").headers["location"] == "/ui/signin"
    # Two sign-ins, two sessions.
    assert client(srv, srv.alice).session_id != client(srv, srv.alice).session_id


def test_sign_out_ends_the_session_on_the_server(srv):
    browser = client(srv, srv.alice)
    stolen = client(srv)  # a copy of the cookie, taken before sign-out
    stolen.cookies.set("recall_ui", browser.session_id, domain="127.0.0.1", path="/ui")
    assert stolen.get("/ui/memories").status_code == 200
    assert browser.post("/ui/signout", data={"csrf": browser.csrf}).status_code == 303
    for c in (stolen, browser):
        r = c.get("/ui/memories")
        assert r.status_code == 303 and r.headers["location"] == "/ui/signin"
        assert c.post("/ui/signout", data={"csrf": browser.csrf}).status_code == 303  # harmless
    # other sessions of the same token live on
    assert client(srv, srv.alice).get("/ui/memories").status_code == 200


def test_failed_sign_ins_are_throttled_per_address(srv):
    # uvicorn takes the client address from X-Forwarded-For sent by a loopback proxy
    def attempt(address: str, token: str) -> httpx.Response:
        return client(srv, **{"X-Forwarded-For": address}).post("/ui/signin",
                                                               data={"token": token})

    for i in range(10):
        assert attempt("203.0.113.7", f"rcl_guess{i}").status_code == 401
    refused = attempt("203.0.113.7", "rcl_guess-again")
    assert refused.status_code == 429 and "set-cookie" not in refused.headers
    wait = int(refused.headers["retry-after"])
    assert 200 <= wait <= 300
    assert "Too many failed sign-ins" in refused.text and f"({wait} s)" in refused.text
    # even the right token waits: a guess that happens to be right must not be confirmed
    assert attempt("203.0.113.7", srv.alice).status_code == 429
    # another address is not held back by this one
    assert attempt("198.51.100.9", srv.alice).status_code == 303


def test_admin_sees_every_namespace(srv):
    adm = client(srv, srv.admin)
    assert adm.get("/ui/memories").headers["location"] == "/ui/admin"  # pick a namespace first
    assert "4711" in adm.get("/ui/memories", params={"ns": "alice"}).text
    listing = adm.get("/ui/admin").text
    assert "alice" in listing and "bob" in listing
