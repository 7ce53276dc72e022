"""The MCP App inside a minimal host of ours that speaks the MCP Apps host protocol
(ext-apps 2026-01-26): the host connects to a real `serve --transport http` child with the
SDK's Client (declaring the Apps extension), reads ui://planning/board, renders it in a
sandboxed iframe, answers ui/initialize, hands it TaskList's result as
ui/notifications/tool-result, and forwards the app's tools/call to the real server (only
tools whose visibility includes "app"). The app initialises, renders the plan from the tool
result, refreshes through its app-only tool, and acts through TaskUpdate."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from playwright.async_api import expect

from tests.support.mcp import text_of
from tests.support.procs import serving
from tests.support.waits import bound

from .conftest import COLUMNS_JS, column_ids, known_plan, screenshot_path

APP_URI = "ui://planning/board"
APPS = [advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})]

HOST_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>test host</title>
<style>body{margin:0;font:13px system-ui;background:#e9ebef} p{margin:6px 10px;color:#444}
iframe{border:1px solid #c9ced6;border-radius:8px;background:#fff;margin:0 10px;
width:calc(100% - 20px);height:640px}</style>
</head><body><p>A minimal MCP Apps host: the board app rendered from TaskList's result.</p>
<iframe id="app" sandbox="allow-scripts"></iframe>
<script>
const frame = document.getElementById("app");
window.hostLog = [];
const send = (m) => frame.contentWindow.postMessage(Object.assign({jsonrpc: "2.0"}, m), "*");
window.addEventListener("message", async (ev) => {
  if (ev.source !== frame.contentWindow) return;
  const m = ev.data;
  if (!m || m.jsonrpc !== "2.0" || !m.method) return;
  window.hostLog.push(m.method === "tools/call" ? "tools/call " + m.params.name : m.method);
  if (m.method === "ui/initialize") {
    send({id: m.id, result: {protocolVersion: m.params.protocolVersion, hostInfo: {name: "test-host", version: "1"},
      hostCapabilities: {serverTools: {}}, hostContext: {theme: "light", displayMode: "inline", platform: "web"}}});
  } else if (m.method === "ui/notifications/initialized") {
    send({method: "ui/notifications/tool-result", params: window.TOOL_RESULT});
  } else if (m.method === "tools/call") {
    const answer = JSON.parse(await window.hostForward(JSON.stringify(m.params)));
    send(answer.error ? {id: m.id, error: answer.error} : {id: m.id, result: answer.result});
  } else if (m.id !== undefined) {
    send({id: m.id, error: {code: -32601, message: "not offered by this host"}});
  }
});
</script></body></html>"""


def dump(result: Any) -> dict[str, Any]:
    return dict(result.model_dump(mode="json", by_alias=True, exclude_none=True))


async def test_the_app_renders_the_tool_result_and_refreshes_through_its_app_only_tool(
    tmp_path: Path, browser: Any, record_property: Any
) -> None:
    root = tmp_path / "root"
    name = known_plan(root)
    with serving(tmp_path, "http", root=root) as srv, anyio.fail_after(bound(120)):
        async with Client(f"{srv.base}/mcp", extensions=APPS) as host:
            tools = {t.name: t for t in (await host.list_tools()).tools}
            for linked in ("PlanList", "TaskList"):
                assert (tools[linked].meta or {})["ui"]["resourceUri"] == APP_URI
            assert (tools["BoardView"].meta or {})["ui"] == {"resourceUri": APP_URI, "visibility": ["app"]}
            (content,) = (await host.read_resource(APP_URI)).contents
            assert content.mime_type == APP_MIME_TYPE
            html = getattr(content, "text", "")
            assert "<script src" not in html and "https://" not in html  # one self-contained document

            def visible_to_app(tool: str) -> bool:
                ui = (tools[tool].meta or {}).get("ui", {}) if tool in tools else None
                return ui is not None and "app" in ui.get("visibility", ["model", "app"])

            async def forward(params_json: str) -> str:
                params = json.loads(params_json)
                if not visible_to_app(params["name"]):
                    return json.dumps({"error": {"code": -32602, "message": f"{params['name']} is not for apps"}})
                result = await host.call_tool(params["name"], params.get("arguments") or {})
                return json.dumps({"result": dump(result)})

            tool_result = await host.call_tool("TaskList", {"plan": name})
            assert not tool_result.is_error, text_of(tool_result)
            page = await browser.new_page()
            await page.expose_function("hostForward", forward)
            await page.set_content(HOST_PAGE)
            await page.evaluate("(r) => { window.TOOL_RESULT = r }", dump(tool_result))
            await page.evaluate("(html) => { document.getElementById('app').srcdoc = html }", html)
            app = page.frame_locator("#app")
            frame = next(f for f in page.frames if f != page.main_frame)
            await frame.wait_for_selector("body[data-initialized='true']")
            await frame.wait_for_selector(".card[data-task='5']")
            assert column_ids(await frame.evaluate(COLUMNS_JS)) == {
                "ready": [4],
                "blocked": [5],
                "in_progress": [3],
                "done": [1, 2],
            }
            # The refresh through BoardView brings what TaskList's rows do not carry: descriptions.
            await expect(app.locator(".card[data-task='5'] .desc")).to_have_text(re.compile("^Once login works"))
            log = await page.evaluate("window.hostLog")
            assert log[:2] == ["ui/initialize", "ui/notifications/initialized"]
            assert "tools/call BoardView" in log
            assert "ui/notifications/size-changed" in log  # so the host can size its frame
            # Live inside the chat: another client's change arrives with the next app-only refresh.
            changed = await host.call_tool("TaskUpdate", {"taskId": 4, "status": "in_progress", "plan": name})
            assert not changed.is_error, text_of(changed)
            started = time.monotonic()
            await frame.wait_for_selector(".col[data-col='in_progress'] .card[data-task='4']", timeout=bound(8000))
            record_property("app_refresh_seconds", round(time.monotonic() - started, 3))
            # Actions go through the same TaskUpdate as the agent's: a refusal shows its message...
            await app.locator(".card[data-task='5'] button[data-action='start']").click()
            await frame.wait_for_selector("#notice.refused")
            refusal = await app.locator("#notice").text_content() or ""
            assert "#5" in refusal and "#3" in refusal, refusal  # blocked by the in-progress #3
            # ...and a change shows on the board at once.
            await app.locator(".card[data-task='3'] button[data-action='complete']").click()
            await frame.wait_for_selector(".col[data-col='done'] .card[data-task='3']")
            await frame.wait_for_selector(".col[data-col='ready'] .card[data-task='5']")
            assert "#3" in (await app.locator("#notice.ok").text_content() or "")
            assert "tools/call TaskUpdate" in await page.evaluate("window.hostLog")
            await page.screenshot(path=str(screenshot_path(tmp_path, "app.png")), full_page=True)


async def test_clients_without_apps_see_no_app_tool_and_no_ui_links(tmp_path: Path, record_property: Any) -> None:
    """The text answers stay the fallback, and tools/list is not one character longer for them."""
    with serving(tmp_path, "http") as srv, anyio.fail_after(bound(60)):
        async with Client(f"{srv.base}/mcp") as plain, Client(f"{srv.base}/mcp", extensions=APPS) as apps:
            listed = await plain.list_tools()
            with_apps = await apps.list_tools()
            plain_resources = {str(r.uri) for r in (await plain.list_resources()).resources}
            apps_resources = {str(r.uri) for r in (await apps.list_resources()).resources}
    assert APP_URI in apps_resources and APP_URI not in plain_resources
    assert "BoardView" not in {t.name for t in listed.tools}
    assert all("ui" not in (t.meta or {}) for t in listed.tools)
    size = len(json.dumps(dump(listed)))
    grown = len(json.dumps(dump(with_apps))) - size
    record_property("tools_list_chars_apps_extra", grown)
    print(f"tools/list: {size} chars without Apps; +{grown} for a client that negotiated Apps")
    assert grown < 600


async def test_the_apps_refreshes_are_not_rounds_of_the_model(tmp_path: Path) -> None:
    """The app asks for the board every few seconds; those calls must not move the model's
    reminder clock (nor carry its reminders off into a result the model never reads)."""
    from server.mcp.app import build_server

    root = tmp_path / "root"
    name = known_plan(root)  # #3 in progress: plan reminders are due every 5th quiet round
    reminder = "<reminder>You have an active session plan."
    async with Client(build_server(root), extensions=APPS) as c:
        await c.call_tool("TaskUpdate", {"taskId": 4, "description": "round 0", "plan": name})
        texts = []
        for _ in range(5):
            for _ in range(3):  # the app's refreshes between two calls of the model
                view = await c.call_tool("BoardView", {"plan": name})
                assert not view.is_error and reminder not in text_of(view)
            texts.append(text_of(await c.call_tool("TaskList", {"plan": name})))
    assert [reminder in t for t in texts] == [False, False, False, False, True]
