"""What each conformance scenario means for planning-mcp, and how its checks are judged.

Most of the suite's server scenarios call fixtures of the suite's own "everything" server
(tools such as `test_simple_text`, resources under `test://`, prompts such as
`test_simple_prompt`) or features we do not advertise. Those scenarios cannot apply; each is
listed with the reason. Every other check must pass, so a new failure fails the test:

- In an applicable scenario every check must pass, a WARNING (a SHOULD not met) included,
  except the few listed in `exempt` (each with its reason): checks inside it that need a suite
  fixture, or that one suite version gets wrong.
- In a scenario that cannot apply, the fixture checks may fail, but `wire-schema-valid` (every
  message we sent is valid against the schema of the negotiated version) is ours everywhere,
  and even a failing fixture check must not show the server lying: no error code 0 and no
  "Internal server error" where the reason is known (an unknown prompt, tool or resource).
- A scenario this file does not know fails the test: a new suite version must be read and
  classified here before it counts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ._suite import Check

OURS_EVERYWHERE = frozenset({"wire-schema-valid"})
# How an answer that hides its reason looks in the suite's messages.
LIE = re.compile(r"MCP error 0:|Internal server error|-32603")
PASSING = frozenset({"SUCCESS", "INFO", "SKIPPED"})


@dataclass(frozen=True)
class Expect:
    applies: bool
    why: str  # what of ours it checks, or why it cannot apply
    # check id -> why it is not ours; "id@version" exempts it in that suite version only
    exempt: Mapping[str, str] = field(default_factory=dict)


def ours(why: str, /, *, only_in: Mapping[str, Mapping[str, str]] | None = None, **exempt: str) -> Expect:
    """An applicable scenario; keyword arguments name exempt checks (`_` for `-`), `only_in` maps a
    suite version to checks exempt in that version alone."""
    all_versions = {k.replace("_", "-"): v for k, v in exempt.items()}
    per_version = {f"{c}@{ver}": reason for ver, checks in (only_in or {}).items() for c, reason in checks.items()}
    return Expect(True, why, all_versions | per_version)


def not_ours(why: str) -> Expect:
    return Expect(False, why)


def demos(why: str, uses: Mapping[str, str]) -> dict[str, Expect]:
    """Scenarios that each use a demo fixture of the suite's (named in `uses`), with `why` a
    template for it."""
    return {scenario: not_ours(why.format(fixture)) for scenario, fixture in uses.items()}


DEMO_TOOL = "calls the suite's demo tool {}, which we do not have; our answer is a tool error (isError)"
VACUOUS = ", which the check happens to accept (a pass that says nothing about us)"
DEMO_PROMPT = "gets the suite's demo prompt {}, which we do not have"
DEMO_RESOURCE = "reads the suite's demo resource {}, which we do not serve"
NO_ASK = "calls the suite's demo tool {}, which asks the client for {} mid-call; no tool of ours asks the client"
MRTR = (
    "SEP-2322 multi-round tool results need the suite's demo tools/prompts (test_input_required_result_*); "
    "no tool or prompt of ours ever needs more input from the client"
)
TASKS_EXT = (
    "the MCP Tasks extension (io.modelcontextprotocol/tasks, SEP-2663) is not advertised: our tasks are plan "
    "tasks behind ordinary tool calls, every call completes synchronously; its demo tools (greet, slow_compute, "
    "failing_job, confirm_delete) are not ours"
)
SKILLS_EXT = "the Skills extension (SEP-2640) is not advertised; the suite skips every check itself"
POLL_FIXTURE = "needs the demo tool test_reconnection, which closes the stream mid-call"
LIST_FIXTURE = (
    "the suite changes the {0} list through its demo tool test_trigger_{0}_change; our {0} list never changes "
    "(it runs at all because the SDK's server/discover declares {0}s.listChanged on 2026-07-28)"
)
STALE_HEADER = (
    "0.1.16 sends this call with the header mcp-protocol-version: 2025-03-26 whatever was negotiated, and the "
    "priming event (which carries the retry field) is for 2025-11-25 clients on, as older ones cannot parse an "
    "empty event; 0.2.0 sends the negotiated version and checks both"
)

SCENARIOS: dict[str, Expect] = {
    # --- lifecycle, transport, security ---
    "server-initialize": ours("initialize: a valid result, a visible-ASCII session id"),
    "server-session-lifecycle": ours("Mcp-Session-Id honoured, DELETE ends the session, then 404"),
    "server-stateless": ours(
        "2026-07-28 stateless requests: _meta envelope validation, server/discover, version and header "
        "errors with their HTTP statuses, 404 for removed methods, subscriptions/listen",
        sep_2575_server_rejects_undeclared_capability="needs the demo tool test_missing_capability",
        sep_2575_missing_capability_http_400="needs the demo tool test_missing_capability",
        sep_2575_server_sends_prompts_list_changed_on_subscription=LIST_FIXTURE.format("prompt"),
        sep_2575_server_sends_tools_list_changed_on_subscription=LIST_FIXTURE.format("tool"),
    ),
    "ping": ours("ping answers {}"),
    "dns-rebinding-protection": ours("a foreign Host/Origin is refused (421), our own accepted"),
    "http-header-validation": ours("SEP-2243 Mcp-Method/Mcp-Name header validation (-32020, HTTP 400)"),
    "http-custom-header-server-validation": not_ours(
        "SEP-2243 x-mcp-header parameters: no tool of ours declares one, so the suite finds nothing to test"
    ),
    "caching": ours("SEP-2549 cache hints (cacheScope, ttl) on list and read results"),
    "server-sse-multiple-streams": ours("several concurrent POST SSE streams on one session, each answered"),
    "server-sse-polling": ours(
        "SSE resumability: a priming event with an id and a retry field on POST streams",
        incoming_sse_event=POLL_FIXTURE,
        server_sse_disconnect_resume=POLL_FIXTURE,
        only_in={"0.1.16": {"server-sse-priming-event": STALE_HEADER, "server-sse-retry-field": STALE_HEADER}},
    ),
    # --- tools ---
    "tools-list": ours("tools/list: our 8 tools, valid names and schemas"),
    "tools-call-simple-text": not_ours(DEMO_TOOL.format("test_simple_text") + VACUOUS),
    "tools-call-image": not_ours(DEMO_TOOL.format("test_image_content") + "; our tools return text"),
    "tools-call-audio": not_ours(DEMO_TOOL.format("test_audio_content") + "; our tools return text"),
    "tools-call-embedded-resource": not_ours(DEMO_TOOL.format("test_embedded_resource")),
    "tools-call-mixed-content": not_ours(DEMO_TOOL.format("test_multiple_content_types")),
    "tools-call-with-logging": not_ours(
        "needs the logging capability (not advertised: logging/setLevel answers -32601) and the demo tool "
        "test_tool_with_logging"
    ),
    "tools-call-error": not_ours(DEMO_TOOL.format("test_error_handling") + VACUOUS),
    "tools-call-with-progress": not_ours(DEMO_TOOL.format("test_tool_with_progress") + "; ours send no progress"),
    "tools-call-sampling": not_ours(NO_ASK.format("test_sampling", "sampling")),
    "tools-call-elicitation": not_ours(NO_ASK.format("test_elicitation", "elicitation")),
    "elicitation-sep1034-defaults": not_ours(NO_ASK.format("test_elicitation_sep1034_defaults", "elicitation")),
    "elicitation-sep1330-enums": not_ours(NO_ASK.format("test_elicitation_sep1330_enums", "elicitation")),
    "json-schema-2020-12": not_ours(
        "looks for the demo tool json_schema_2020_12_tool; our schemas are checked by tools-list"
    ),
    # --- capabilities we do not advertise ---
    "logging-set-level": not_ours("the logging capability is not advertised; logging/setLevel answers -32601"),
    "completion-complete": not_ours("the completions capability is not advertised; completion/complete answers -32601"),
    # --- resources ---
    "resources-list": ours("resources/list"),
    **demos(
        DEMO_RESOURCE,
        {
            "resources-read-text": "test://static-text",
            "resources-read-binary": "test://static-binary",
            "resources-templates-read": "test://template/123/data",
        },
    ),
    "resources-subscribe": ours("resources/subscribe answers {} (advertised: resources.subscribe)"),
    "resources-unsubscribe": ours("resources/unsubscribe after subscribe answers {}"),
    "sep-2164-resource-not-found": ours("an unknown URI: an error (-32602 on 2026-07-28) with data.uri"),
    # --- prompts ---
    "prompts-list": ours("prompts/list: plan-mode, resume, verify"),
    **demos(
        DEMO_PROMPT,
        {
            "prompts-get-simple": "test_simple_prompt",
            "prompts-get-with-args": "test_prompt_with_arguments",
            "prompts-get-embedded-resource": "test_prompt_with_embedded_resource",
            "prompts-get-with-image": "test_prompt_with_image",
        },
    ),
    # --- extensions and drafts we do not offer ---
    **{f"sep-2640-skills-{s}": not_ours(SKILLS_EXT) for s in ("directory", "enumeration", "manifest")},
    **{
        f"tasks-{s}": not_ours(TASKS_EXT)
        for s in (
            "lifecycle",
            "capability-negotiation",
            "wire-fields",
            "request-state-removal",
            "mrtr-input",
            "request-headers",
            "dispatch-and-envelope",
            "status-notifications",
            "required-task-error",
            "mrtr-composition",
        )
    },
    **{
        f"input-required-result-{s}": not_ours(MRTR)
        for s in (
            "basic-elicitation",
            "basic-sampling",
            "basic-list-roots",
            "request-state",
            "multiple-input-requests",
            "multi-round",
            "missing-input-response",
            "non-tool-request",
            "result-type",
            "unsupported-methods",
            "tampered-state",
            "capability-check",
            "ignore-extra-params",
            "validate-input",
        )
    },
}


def problems(scenario: str, checks: list[Check], version: str) -> list[str]:
    """Why `scenario`'s checks (from suite `version`) do not meet our expectation, one line each;
    empty when they do."""
    expect = SCENARIOS.get(scenario)
    if expect is None:
        return [f"{scenario}: a scenario tests/conformance/expectations.py does not classify yet"]
    found = []
    for c in checks:
        line = f"{scenario} / {c.id}: {c.status}: {c.message}"
        if expect.applies and (c.id in expect.exempt or f"{c.id}@{version}" in expect.exempt):
            continue
        if not expect.applies and c.id not in OURS_EVERYWHERE:
            if c.status == "FAILURE" and LIE.search(c.message):
                found.append(line + "  <- the answer hides its reason (code 0 or internal error)")
            continue
        if c.status not in PASSING:
            found.append(line)
    return found


def verdict(checks: list[Check]) -> str:
    """A short cell for the table: pass, or what did not pass."""
    bad = [c for c in checks if c.status not in PASSING]
    if not bad:
        skipped = all(c.status == "SKIPPED" for c in checks if c.id not in OURS_EVERYWHERE)
        return "skipped by the suite" if skipped and checks else "pass"
    word = "warn" if all(c.status == "WARNING" for c in bad) else "fail"
    if len(bad) > 2:
        return f"{word}: {len(bad)} of {len(checks)} checks"
    return f"{word}: " + ", ".join(f"`{c.id}`" for c in bad)
