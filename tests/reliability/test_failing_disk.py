"""Promise: when the disk refuses a write (read-only folder, full disk), the tool
answers with an error and every file is as it was.

Tests run as root here, where chmod 0o555 does not stop writes, so the folder is made
read-only for real with a read-only bind mount, and the disk full with a 64 KB tmpfs.
Without root (or without mount rights) the chmod path is used; the full disk is skipped."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from bench.audit import graph_problems, read_tasks
from server.mcp.app import build_server
from tests.support.files import tree_state
from tests.support.mcp import text_of
from tests.support.seed import make_plan
from tests.support.waits import bound

PLAN = "2026-05-28-disk"


def _mount(*args: str) -> bool:
    try:
        return subprocess.run(["mount", *args], capture_output=True, timeout=bound(10)).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=bound(10))


def _writable(folder: Path) -> bool:
    probe = folder / ".probe"
    try:
        probe.write_bytes(b"")
    except OSError:
        return False
    probe.unlink()
    return True


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[str]:
    """Make `folder` refuse writes for real; yields the technique used."""
    mode = folder.stat().st_mode
    os.chmod(folder, 0o555)
    if not _writable(folder):
        try:
            yield "chmod 0o555"
        finally:
            os.chmod(folder, mode)
        return
    os.chmod(folder, mode)  # running as root: chmod does not stop writes
    if not (_mount("--bind", str(folder), str(folder)) and _mount("-o", "remount,bind,ro", str(folder))):
        _umount(folder)
        pytest.skip("cannot make a folder read-only here: chmod is ignored (root) and mount is not permitted")
    try:
        assert not _writable(folder)
        yield "read-only bind mount"
    finally:
        _umount(folder)


def disk_plan(root: Path) -> Path:
    return make_plan(root, "disk", [{"subject": "a", "description": ""}, {"subject": "b", "blockedBy": [1]}])


WRITES = [
    ("TaskCreate", {"subject": "new", "description": "d" * 15000, "blockedBy": [1]}),
    ("TaskUpdate", {"taskId": 1, "status": "in_progress", "owner": "me"}),
    ("TaskUpdate", {"taskId": 2, "description": "e" * 15000}),
    ("TaskUpdate", {"taskId": 1, "addBlockedBy": [2]}),  # a cycle: refused on its own merits
    ("TaskUpdate", {"taskId": 2, "status": "deleted"}),
    ("PlanArchive", {"force": True}),
]


async def _refused_writes(root: Path, folder: Path, writes: list[tuple[str, dict]] = WRITES) -> list[str]:
    before = tree_state(root)
    messages = []
    with anyio.fail_after(bound(30)):
        async with Client(build_server(root, lock_timeout=2)) as c:
            for tool, args in writes:
                r = await c.call_tool(tool, {**args, "plan": PLAN})
                assert r.is_error, (tool, args, text_of(r))
                messages.append(text_of(r))
            r = await c.call_tool("TaskList", {"plan": PLAN})  # reads still work
            assert not r.is_error and "#2 [pending] b" in text_of(r)
    assert tree_state(root) == before, "a refused write changed the files"
    return messages


@pytest.mark.parametrize("lock_exists", [True, False])
async def test_read_only_plan_folder(tmp_path: Path, lock_exists: bool) -> None:
    root = tmp_path / "root"
    folder = disk_plan(root)
    if lock_exists:
        (folder / ".lock").touch()
    with read_only(folder) as how:
        messages = await _refused_writes(root, folder)
    storage = [m for m in messages if "Could not write" in m]
    assert storage and all(("Read-only" in m or "Permission" in m) for m in storage), messages
    tasks, bad = read_tasks(folder)
    assert bad == [] and graph_problems(tasks) == [] and set(tasks) == {1, 2}
    print(f"\nread-only via {how}: {len(messages)} writes refused")


async def test_full_disk(tmp_path: Path) -> None:
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)):
        pytest.skip("cannot mount a small tmpfs here (needs root); ENOSPC is not simulated")
    try:
        root = mnt / "root"
        folder = disk_plan(root)
        (folder / ".lock").touch()
        filler = mnt / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
        try:  # fill the disk to the last byte
            for size in (4096, 1):
                with contextlib.suppress(OSError):
                    while os.write(fd, b"\0" * size):
                        pass
        finally:
            os.close(fd)
        with pytest.raises(OSError) as full:
            (mnt / "probe").write_bytes(b"x" * 5000)
        assert full.value.errno == errno.ENOSPC
        (mnt / "probe").unlink(missing_ok=True)
        # (PlanArchive is a rename, which needs no space: it is left out here.)
        messages = await _refused_writes(root, folder, WRITES[:-1])
        assert any("No space left" in m for m in messages), messages
        assert not [n for n in os.listdir(folder) if n.endswith(".tmp")], "temp files left after ENOSPC"
        filler.unlink()  # space again: the same store works
        async with Client(build_server(root, lock_timeout=2)) as c:
            r = await c.call_tool("TaskCreate", {"subject": "after", "description": "", "plan": PLAN})
            assert not r.is_error and "#3 " in text_of(r), text_of(r)
        tasks, bad = read_tasks(folder)
        assert bad == [] and graph_problems(tasks) == [] and set(tasks) == {1, 2, 3}
    finally:
        _umount(mnt)
