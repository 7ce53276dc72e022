"""The texts an agent reads: plan.md, boards, the Active Plans block, summaries.

Formats marked "exact" in the contract are produced here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from .. import gates, verify
from ..activeplans import ACTIVE_PLANS_HEADER as ACTIVE_PLANS_HEADER
from ..activeplans import PlanLine, block_text, line_text, progress_text
from ..models import CorruptFile, PlanSnapshot, PlanSummary, Task, TaskStatus
from ..safetext import escape

# Everything read from a task file or plan.md is shown through escape(): the files are
# hand-editable, and a line break or ESC in a subject must not forge lines or reach a
# terminal (status, board and the start-up summary print these texts).

SUMMARY_HEADER = "[Session Plan] Active tasks:"
SUMMARY_MAX_TASKS = 20
MARKS = {TaskStatus.COMPLETED: "[x]", TaskStatus.IN_PROGRESS: "[>]", TaskStatus.PENDING: "[ ]"}
# A claim whose lease ran out (graph.lease_expired): any owner may take the task now.
CLAIMABLE_MARK = "[lease expired: claimable]"


def render_plan_md(title: str, analysis: str, approach: str, steps: Sequence[str], tasks: Sequence[Task]) -> str:
    if steps:
        step_lines = [f"{i}. {s}" for i, s in enumerate(steps, start=1)]
    elif tasks:
        step_lines = [f"{t.id}. {t.subject} (task #{t.id})" for t in tasks]
    else:
        step_lines = ["(none yet)"]
    parts = [
        f"# {title}",
        "## Analysis",
        analysis.strip() or "(none)",
        "## Approach",
        approach.strip() or "(none)",
        "## Steps",
        "\n".join(step_lines),
    ]
    return "\n\n".join(parts) + "\n"


def progress_tag(summary: PlanSummary) -> str:
    return progress_text(summary.progress.completed, summary.progress.total)


def line_of(summary: PlanSummary) -> PlanLine:
    """What the summary's line in the Active Plans block shows."""
    return PlanLine(summary.name, summary.progress.completed, summary.progress.total, summary.current)


def plan_line(summary: PlanSummary) -> str:
    """`<name> [k/n done] current: "<subject>"` (exact: activeplans.line_text)."""
    return line_text(line_of(summary))


def no_plans_text(archived: int) -> str:
    """PlanList's answer when it lists nothing; `archived` plans were left out of it."""
    if not archived:
        return "No plans yet. Call PlanCreate to start one."
    plans = "plan is" if archived == 1 else "plans are"
    return (
        f"No active plans: {archived:,} {plans} archived (call PlanList with includeDone=true to see them). "
        "Call PlanCreate to start a new one."
    )


def active_plans_block(summaries: Iterable[PlanSummary]) -> str:
    """The `# Active Plans` block (exact), one line per active plan, oldest first."""
    return block_text(plan_line(s) for s in summaries if not s.archived)


def startup_summary(snapshots: Iterable[PlanSnapshot]) -> str:
    """`[Session Plan] Active tasks:` and a checklist per active plan (exact)."""
    out = [SUMMARY_HEADER]
    any_plan = False
    for snap in snapshots:
        any_plan = True
        out.append(f"  ▸ {snap.name} {progress_tag(snap.summary())}")
        tasks = list(snap.tasks.values())
        shown = tasks
        if len(tasks) > SUMMARY_MAX_TASKS:
            # A long plan: show the work still open, first ids first.
            shown = [t for t in tasks if t.status is not TaskStatus.COMPLETED][:SUMMARY_MAX_TASKS]
        out += [f"    {MARKS[t.status]} #{t.id}: {escape(t.subject)}" for t in shown]
        out += [f"    [!] #{c.task_id}: {escape(c.file)} is unreadable ({escape(c.reason)})" for c in snap.corrupt]
        if len(shown) < len(tasks):
            out.append(f"    … {len(tasks) - len(shown):,} more tasks; see TaskList")
    if not any_plan:
        out.append("  (none)")
    return "\n".join(out)


def priority_mark(priority: int) -> str:
    return f"P{priority}"


def marks(task: Task) -> str:
    """A task's priority, labels and parent as a line shows them: ` P1 {ui,bug} ^#3`, each
    only when it has one ("" for a task with none of them)."""
    out = ""
    if task.priority is not None:
        out += " " + priority_mark(task.priority)
    if task.labels:
        out += " {" + ",".join(escape(label) for label in task.labels) + "}"
    if task.parent is not None:
        out += f" ^#{task.parent}"
    if gates.is_gated(task):
        out += gates.mark(task.gate)
    if task.status is not TaskStatus.COMPLETED:
        out += verify.mark(task.verification)
    return out


def task_line(task: Task, open_blockers: Sequence[int] = (), claimable: bool = False) -> str:
    """`#<id> [<status>] <subject>` + ` (<owner>)` + marks (` P1 {ui,bug} ^#3`) +
    ` [blocked by #a, #b]` (exact), and CLAIMABLE_MARK last when its lease ran out."""
    line = f"#{task.id} [{task.status.value}] {escape(task.subject)}"
    if task.owner:
        line += f" ({escape(task.owner)})"
    line += marks(task)
    if open_blockers:
        line += " [blocked by " + ", ".join(f"#{b}" for b in open_blockers) + "]"
    if claimable:
        line += " " + CLAIMABLE_MARK
    return line


def corrupt_line(c: CorruptFile) -> str:
    return f"#{c.task_id} [unreadable] {escape(c.file)}: {escape(c.reason)}"


def task_board(
    summary: PlanSummary,
    tasks: Sequence[Task],
    open_blockers: dict[int, list[int]],
    unreadable: Sequence[CorruptFile] = (),
    next_cursor: str | None = None,
    lines_of_tasks: Sequence[str] | None = None,
    claimable: Collection[int] = (),
    order: str | None = None,
) -> str:
    """`lines_of_tasks`: each task's task_line, in the order of `tasks`, where the caller
    has them already; `claimable`: the ids whose lease ran out (TaskPage.claimable);
    `order`: the order of the tasks when it is not by id, said under the header."""
    lines = [f"{summary.name} {progress_tag(summary)}"]
    if order and tasks:
        lines.append(f"({order})")
    if lines_of_tasks is None:
        lines_of_tasks = [task_line(t, open_blockers.get(t.id, ()), t.id in claimable) for t in tasks]
    if unreadable:  # unreadable files go between the tasks, by id
        rows = [*zip((t.id for t in tasks), lines_of_tasks, strict=True)]
        lines += [text for _, text in sorted(rows + [(c.task_id, corrupt_line(c)) for c in unreadable])]
    else:
        lines += lines_of_tasks
    if not tasks and not unreadable:
        lines.append("(no tasks match)")
    gated = [t for t in tasks if gates.is_gated(t)]
    if gated:
        waiting = gates.waiting_line(summary.name, gated)
        lines.append(waiting[0].upper() + waiting[1:])
    if next_cursor:
        lines.append(f'More tasks: call TaskList with cursor="{next_cursor}" for the next page.')
    return "\n".join(lines)


def _field_lines(task: Task) -> list[str]:
    """TaskGet's lines for a task's priority, labels, parent and gate, each only when set."""
    lines = []
    if task.priority is not None:
        lines.append(f"Priority: {priority_mark(task.priority)}")
    if task.labels:
        lines.append("Labels: " + ", ".join(escape(label) for label in task.labels))
    if task.parent is not None:
        lines.append(f"Parent: #{task.parent}")
    if task.gate is not None:
        lines.append(f"Gate: {gates.describe(task.gate)}")
    return lines


def task_detail(task: Task, open_blockers: Sequence[int]) -> str:
    def ids(values: Sequence[int]) -> str:
        return ", ".join(f"#{i}" for i in values) or "none"

    lines = [
        f"Task #{task.id}: {escape(task.subject)}",
        f"Status: {task.status.value}",
        f"Owner: {escape(task.owner) or 'none'}",
    ]
    if task.lease_seconds:
        lines.append(f"Lease: {task.lease_seconds:,} s, until {escape(task.lease_expires_at)}")
    if task.active_form:
        lines.append(f"Active form: {escape(task.active_form)}")
    lines += _field_lines(task)
    if task.acceptance:
        lines.append("Acceptance:")
        lines += [f"- [ ] {escape(c)}" for c in task.acceptance]
    if task.verification:
        lines.append(f"Checks: {verify.describe(task.verification)}")
        output = task.verification.get("output")
        if isinstance(output, str) and output:
            lines.append(escape(output, multiline=True))
    lines += [
        f"Blocked by: {ids(task.blocked_by)}" + (f" (open: {ids(open_blockers)})" if open_blockers else ""),
        f"Blocks: {ids(task.blocks)}",
    ]
    if task.metadata:
        lines.append(f"Metadata: {task.metadata}")
    lines += ["Description:", escape(task.description, multiline=True) or "(none)"]
    return "\n".join(lines + notes_lines(task.notes))


NOTES_SHOWN = 3  # TaskGet's latest notes; the board shows them all


def notes_lines(notes: Sequence[dict[str, str]], shown: int = NOTES_SHOWN) -> list[str]:
    """`Notes (latest 3 of 7):` then one line a note, `- <at> <by>: <text>` (a text of
    several lines indented under it)."""
    if not notes:
        return []
    head = f"Notes (latest {shown} of {len(notes):,}):" if len(notes) > shown else "Notes:"
    lines = [head]
    for n in notes[-shown:]:
        text = escape(str(n.get("text", "")), multiline=True).replace("\n", "\n  ")
        lines.append(f"- {escape(str(n.get('at', '')))} {escape(str(n.get('by', '')))}: {text}")
    return lines


def created_text(task: Task) -> str:
    """`Task #<id> created successfully: <subject>` (exact)."""
    return f"Task #{task.id} created successfully: {escape(task.subject)}"


def claimed_line(task: Task) -> str:
    """What a claim of the next task adds to its answer: which task the agent now works on."""
    return f"Claimed: #{task.id} {escape(task.subject)} (TaskGet #{task.id} for its description)"


def updated_text(
    task_id: int,
    changed: Sequence[str],
    unblocked: Sequence[Task] = (),
    all_done: bool = False,
    deleted: bool = False,
) -> str:
    """`Updated task #<id> ` + the fields that changed, then what follows from it."""
    if deleted:
        return f"Updated task #{task_id} deleted"
    lines = [f"Updated task #{task_id} " + (", ".join(changed) if changed else "(nothing changed)")]
    if unblocked:
        lines.append("Now unblocked: " + ", ".join(f"#{t.id} {escape(t.subject)}" for t in unblocked))
    if all_done:
        lines.append(
            "All tasks in this plan are done. Verify the result against each point of plan.md "
            "(tests, a functional check, the original request), reopen anything that fails, "
            "then call PlanArchive."
        )
    return "\n".join(lines)
