"""The Dashboard's aiohttp app: sign-in, the static single page, and the allowlisted API proxy.

Routes: ``/login`` (GET the form; the key only by the form's POST, never in a URL: key checks are
rate-limited for the whole Dashboard, addresses that sent wrong keys last: `service.api.limiter.CheckLimiter`), ``/logout`` (POST with the CSRF header), ``/`` (the page),
``/static/*`` (assets from this package) and ``/api/*``, which forwards to the service's
``/api/sr-bench/v1/*`` with the service token and the signed-in user as the actor headers
(``X-SR-Bench-Actor-ID`` / ``-Role``) — only the read routes in `READ_ROUTES`, the writes in
`WRITE_ROUTES` (UI-2 create evaluation, UI-6 compare, UI-8 recovery, experiments) and the deletes in
`DELETE_ROUTES`; a POST or DELETE must carry the ``X-SR-Bench-Dashboard`` header (a cross-site form
cannot). Every answer — redirects, 404s and 405s included — has a strict Content-Security-Policy,
``X-Frame-Options``, ``nosniff`` and ``Cache-Control: no-store`` (one middleware).
"""

from __future__ import annotations

import html
import re
import ssl
from importlib import resources
from typing import Any

import aiohttp
from aiohttp import web

from srbench.dashboard.auth import COOKIE, SESSION_TTL_S, Sessions
from srbench.discovery import API_PREFIX, CONNECT_TIMEOUT_S
from srbench.service.api.http import MAX_BODY
from srbench.service.api.limiter import CheckLimiter, source_of

_SEG = r"[A-Za-z0-9][A-Za-z0-9._:-]*"
READ_ROUTES = [re.compile(p) for p in (
    r"/health", r"/catalog", r"/setup", r"/targets", r"/datasets", r"/datasets/selection", rf"/datasets/{_SEG}",
    rf"/datasets/{_SEG}/cases", r"/runs", rf"/runs/{_SEG}",
    rf"/runs/{_SEG}/(report|results|calls|events|recipes|baselines|diagnose|live)",
    rf"/runs/{_SEG}/calls/{_SEG}", r"/replay-options", r"/comparison-options", r"/dataset-preparations",
    r"/dataset-preparations/options", rf"/dataset-preparations/{_SEG}", r"/experiments", rf"/experiments/{_SEG}",
    rf"/experiments/{_SEG}/runs")]
# model-free (comparison, combining or composing frozen datasets, freezing a plan, a candidate plan, a
# replay, recovery review, experiments, preparing a dataset) or started by an explicit click after review
# (a run, a recovery child run)
WRITE_ROUTES = [re.compile(p) for p in (r"/comparisons", r"/datasets/combine", r"/datasets/compose", r"/plans",
                                        r"/runs", r"/replays", r"/experiments", rf"/experiments/{_SEG}/runs",
                                        r"/dataset-preparations", rf"/runs/{_SEG}/candidate-plan",
                                        rf"/runs/{_SEG}/recover-plan", rf"/runs/{_SEG}/recover")]
DELETE_ROUTES = [re.compile(rf"/experiments/{_SEG}")]         # an experiment; its runs are kept
CSRF_HEADER = "X-SR-Bench-Dashboard"
_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")

SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-store"}
MAX_LOGIN_BODY = 4096

SESSIONS: web.AppKey[Sessions] = web.AppKey("sessions", Sessions)
LIMITER: web.AppKey[CheckLimiter] = web.AppKey("limiter", CheckLimiter)
UPSTREAM: web.AppKey[dict[str, str]] = web.AppKey("upstream", dict)
HTTP: web.AppKey[aiohttp.ClientSession] = web.AppKey("http", aiohttp.ClientSession)
ASSETS: web.AppKey[dict[str, tuple[bytes, str]]] = web.AppKey("assets", dict)


def _assets() -> dict[str, tuple[bytes, str]]:
    """Every file of the package's static folder, read once: name → (bytes, content type)."""
    folder = resources.files("srbench.dashboard").joinpath("static")
    return {f.name: (f.read_bytes(), _TYPES[f.name[f.name.rfind("."):]]) for f in folder.iterdir()
            if f.name[f.name.rfind("."):] in _TYPES}


@web.middleware
async def _headers(request: web.Request, handler: Any) -> web.StreamResponse:
    """The security headers on every answer, an HTTP exception's (303, 404, 405 …) too."""
    try:
        resp = await handler(request)
    except web.HTTPException as exc:
        exc.headers.update(SECURITY_HEADERS)
        raise
    resp.headers.update(SECURITY_HEADERS)
    return resp


def _signed_in(request: web.Request) -> bool:
    return request.app[SESSIONS].valid(request.cookies.get(COOKIE))


def _login_page(message: str = "", status: int | None = None) -> web.Response:
    note = f'<p class="error">{html.escape(message)}</p>' if message else ""
    body = ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'><title>sr-bench — sign in</title><link rel='icon' href='data:,'>"
            "<link rel='stylesheet' href='/static/style.css'></head><body class='login'><main>"
            "<h1>sr-bench Dashboard</h1>" + note +
            "<form method='post' action='/login'><label>Dashboard key "
            "<input name='key' type='password' autocomplete='current-password' autofocus></label>"
            "<button type='submit'>Sign in</button></form>"
            "<p class='hint'>The key is in the file <code>dashboard.key</code> beside the store, or in "
            "<code>SR_BENCH_DASHBOARD_KEY</code>; <code>sr-bench dashboard</code> says which.</p>"
            "</main></body></html>")
    return web.Response(text=body, content_type="text/html", status=status or (401 if message else 200))


def _session_response(request: web.Request, user: tuple[str, str]) -> web.Response:
    resp = web.Response(status=303, headers={"Location": "/"})
    resp.set_cookie(COOKIE, request.app[SESSIONS].open(user), httponly=True, samesite="Strict", path="/",
                    max_age=SESSION_TTL_S, secure=request.secure)
    return resp


async def login_get(request: web.Request) -> web.Response:
    if "key" in request.query:      # a key in a URL lands in history, logs and Referer headers
        return _login_page("The key is accepted only by this form, never in a URL: paste it below.", 400)
    return _login_page()


async def login_post(request: web.Request) -> web.Response:
    """A key is checked when the Dashboard-wide budget allows (a wrong key spends a check, the right one
    gives it back), addresses that sent wrong keys last; the farthest back of a full queue is refused unread."""
    if request.body_exists and (request.content_length is None or request.content_length > MAX_LOGIN_BODY):
        return _login_page("That sign-in form is too large.", 413)
    try:
        form = await request.post()
    except (UnicodeDecodeError, LookupError, ValueError):    # bytes not UTF-8, an unknown charset: a 400, not a 500
        return _login_page("That sign-in form could not be read: send it as UTF-8 form data (the sign-in page "
                           "does).", 400)
    limiter, source = request.app[LIMITER], source_of(request.remote)
    if not await limiter.admit(source):
        wait = limiter.retry_after()
        resp = _login_page(f"Too many sign-in attempts are arriving (keys are checked at most {limiter.rate:g} a "
                           f"second in all, addresses that sent wrong keys last): try again in {wait} s.", 429)
        resp.headers["Retry-After"] = str(wait)
        return resp
    key = form.get("key")
    user = request.app[SESSIONS].user_of_key(key) if isinstance(key, str) else None
    limiter.settle(source, right=user is not None)
    if user is None:
        return _login_page("That is not the key of this Dashboard.")
    return _session_response(request, user)


async def logout(request: web.Request) -> web.Response:
    if request.headers.get(CSRF_HEADER) != "1":      # a cross-site form cannot sign the browser out
        return _error(403, "forbidden", f"signing out needs the {CSRF_HEADER} header")
    request.app[SESSIONS].close(request.cookies.get(COOKIE))
    resp = web.Response(status=303, headers={"Location": "/login"})
    resp.del_cookie(COOKIE, path="/")
    return resp


async def index(request: web.Request) -> web.Response:
    if not _signed_in(request):
        raise web.HTTPSeeOther("/login")
    data, ctype = request.app[ASSETS]["index.html"]
    return web.Response(body=data, content_type=ctype)


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name == "index.html" or name not in request.app[ASSETS]:
        raise web.HTTPNotFound()
    data, ctype = request.app[ASSETS][name]
    return web.Response(body=data, content_type=ctype)


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": message, "code": code}, status=status)     # the service's error shape


async def proxy(request: web.Request) -> web.Response:
    user = request.app[SESSIONS].user(request.cookies.get(COOKIE))
    if user is None:
        return _error(401, "unauthorized", "sign in to the Dashboard first")
    path = "/" + request.match_info["path"]
    routes = {"GET": READ_ROUTES, "POST": WRITE_ROUTES, "DELETE": DELETE_ROUTES}[request.method]
    if not any(r.fullmatch(path) for r in routes):
        return _error(404, "not_found", f"the Dashboard does not offer {request.method} {path}")
    data = None
    if request.method in ("POST", "DELETE"):
        if request.headers.get(CSRF_HEADER) != "1":
            return _error(403, "forbidden", f"a Dashboard {request.method} needs the {CSRF_HEADER} header")
        data = await request.read() or None
        if data is not None and len(data) > MAX_BODY:
            return _error(413, "too_large", "request body too large")
    up = request.app[UPSTREAM]
    headers = {"Authorization": f"Bearer {up['token']}", "Content-Type": "application/json",
               "X-SR-Bench-Actor-ID": user[0], "X-SR-Bench-Actor-Role": user[1]}
    if data is not None and "Content-Encoding" in request.headers:     # the body as sent: the service decodes it
        headers["Content-Encoding"] = request.headers["Content-Encoding"]
    try:
        async with request.app[HTTP].request(
                request.method, up["url"] + API_PREFIX + path, params=request.rel_url.query, data=data,
                headers=headers, allow_redirects=False) as resp:
            body = await resp.read()
            status, ctype = resp.status, resp.headers.get("Content-Type", "application/json")
    except aiohttp.ConnectionTimeoutError:
        return _error(502, "service_unavailable", f"the sr-bench service does not answer: no connection within "
                                                  f"{CONNECT_TIMEOUT_S:g} s (ConnectionTimeoutError)")
    except (aiohttp.ClientError, TimeoutError) as exc:
        return _error(502, "service_unavailable", f"the sr-bench service does not answer: {type(exc).__name__}")
    return web.Response(body=body, status=status, content_type=ctype.split(";")[0])


def make_dashboard(service_url: str, service_token: str, key: str, users: list[tuple[str, str, str]] | None = None,
                   verify: ssl.SSLContext | bool = True) -> web.Application:
    """The Dashboard app for one service; `key` signs browsers in as the operator's user, `users`
    ((key, actor id, role)) as further users; `verify` checks an https service's certificate (the CLI
    client's, `discovery.client_verify`)."""
    app = web.Application(client_max_size=MAX_BODY, middlewares=[_headers])
    app[SESSIONS] = Sessions(key, users)
    app[LIMITER] = CheckLimiter()
    app[UPSTREAM] = {"url": service_url.rstrip("/"), "token": service_token}
    app[ASSETS] = _assets()

    async def open_http(app: web.Application) -> Any:
        # a service that never answers a connection (SR_BENCH_URL behind a firewall dropping packets) is a 502
        # within CONNECT_TIMEOUT_S, not after the 600 s a request may take
        app[HTTP] = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600, sock_connect=CONNECT_TIMEOUT_S),
                                          connector=aiohttp.TCPConnector(ssl=verify))
        yield
        await app[HTTP].close()

    app.cleanup_ctx.append(open_http)
    app.router.add_get("/login", login_get)
    app.router.add_post("/login", login_post)
    app.router.add_post("/logout", logout)
    app.router.add_get("/", index)
    app.router.add_get("/static/{name}", static)
    app.router.add_route("GET", "/api/{path:.+}", proxy)
    app.router.add_route("POST", "/api/{path:.+}", proxy)
    app.router.add_route("DELETE", "/api/{path:.+}", proxy)
    return app
