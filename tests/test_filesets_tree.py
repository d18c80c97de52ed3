"""crest.filesets on disk: generate (idempotent, never clobbers foreign files), load_manifest and verify.

Trees are small (webstone 5.8 MB, webcat mixes, sizes 18.9 MB) and live in pytest's tmp_path.
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from pathlib import Path

import pytest

from crest.filesets import (
    MANIFEST_NAME,
    DirectoryConflictError,
    FilesetError,
    ManifestError,
    build_manifest,
    file_bytes,
    generate,
    generate_tree,
    header_line,
    load_manifest,
    verify,
)


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """(mtime_ns, inode) of every file under root: an atomic rewrite changes the inode even within one mtime tick."""
    return {
        str(path.relative_to(root)): (path.stat().st_mtime_ns, path.stat().st_ino)
        for path in root.rglob("*")
        if path.is_file()
    }


def test_generate_writes_exact_files_and_manifest(tmp_path: Path) -> None:
    root = tmp_path / "docroot"
    manifest = generate("webcat-large-filemix", root)
    assert manifest == build_manifest("webcat-large-filemix")
    assert load_manifest(root) == manifest
    for entry in manifest.files:
        assert (root / entry.path).read_bytes() == file_bytes(entry)
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    assert on_disk == {e.path for e in manifest.files} | {MANIFEST_NAME}  # no temporary files left
    assert verify(root) == []


def test_two_writers_filling_one_directory_at_once_both_succeed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two crests (two runs, two test workers) filling one cached fileset at once: each writes files of its
    own and renames them whole, so neither fails and the tree is exact, with no temporary file left. The two
    go in lockstep, each rename waiting for the other's: both have written a file before either renames it
    (a shared temporary name then had one rename the other's file and the other find nothing to rename)."""
    root = tmp_path / "docroot"
    lockstep = threading.Barrier(2, timeout=10)
    rename = os.replace

    def in_lockstep(src: str | Path, dst: str | Path) -> None:
        lockstep.wait()
        rename(src, dst)

    monkeypatch.setattr(os, "replace", in_lockstep)
    failed: list[BaseException] = []

    def fill() -> None:
        try:
            generate("webcat-large-filemix", root)
        except BaseException as exc:
            failed.append(exc)
            lockstep.abort()

    writers = [threading.Thread(target=fill) for _ in range(2)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    monkeypatch.undo()
    assert failed == [] and verify(root) == []
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    assert on_disk == {e.path for e in build_manifest("webcat-large-filemix").files} | {MANIFEST_NAME}


def test_generate_twice_writes_nothing(tmp_path: Path) -> None:
    first = generate_tree("sizes", tmp_path)
    assert (first.written, first.kept, first.removed) == (22, 0, 0)
    before = _snapshot(tmp_path)
    second = generate_tree("sizes", tmp_path)
    assert (second.written, second.kept, second.removed) == (0, 22, 0)
    assert _snapshot(tmp_path) == before  # manifest included
    assert second.manifest == first.manifest


def test_files_readable_by_other_users_despite_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        generate("webstone", tmp_path / "a" / "b")
    finally:
        os.umask(old)
    for path in [tmp_path / "a", tmp_path / "a" / "b"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o755
    for path in (tmp_path / "a" / "b").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_verify_detects_changed_truncated_and_missing(tmp_path: Path) -> None:
    generate("webstone", tmp_path)
    with open(tmp_path / "file50k.html", "r+b") as f:  # one byte changed past the header
        f.seek(1000)
        original = f.read(1)
        f.seek(1000)
        f.write(b"#" if original != b"#" else b"%")
    os.truncate(tmp_path / "file500.html", 100)
    (tmp_path / "file5m.html").unlink()
    assert verify(tmp_path) == [
        "file500.html: size 100, expected 500",
        "file50k.html: content differs at byte 1000",
        "file5m.html: missing",
    ]


def test_verify_detects_changed_header_and_non_file(tmp_path: Path) -> None:
    generate("webstone", tmp_path)
    content = bytearray((tmp_path / "file5k.html").read_bytes())
    content[0:10] = b"CREST-FILE"
    (tmp_path / "file5k.html").write_bytes(bytes(content))
    (tmp_path / "file500k.html").unlink()
    (tmp_path / "file500k.html").mkdir()
    assert verify(tmp_path) == [
        "file5k.html: content differs at byte 0",
        "file500k.html: not a regular file",
    ]


def test_regenerate_repairs(tmp_path: Path) -> None:
    generate("webstone", tmp_path)
    os.truncate(tmp_path / "file500.html", 10)
    (tmp_path / "file5m.html").unlink()
    with open(tmp_path / "file50k.html", "r+b") as f:
        f.seek(2000)
        f.write(b"#")
    quick = generate_tree("webstone", tmp_path)
    # Size and header are what the quick check sees: the byte at 2000 is only found by a full check.
    assert (quick.written, quick.kept) == (2, 3)
    assert verify(tmp_path) == ["file50k.html: content differs at byte 2000"]
    full = generate_tree("webstone", tmp_path, full_check=True)
    assert (full.written, full.kept) == (1, 4)
    assert verify(tmp_path) == []


def test_another_fileset_in_directory_is_refused(tmp_path: Path) -> None:
    generate("webstone", tmp_path)
    before = _snapshot(tmp_path)
    with pytest.raises(DirectoryConflictError, match="holds the webstone fileset, not sizes") as info:
        generate("sizes", tmp_path)
    assert "\n" not in str(info.value)
    assert _snapshot(tmp_path) == before


def test_foreign_file_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "webcat").mkdir()
    (tmp_path / "webcat" / "2K.html").write_bytes(b"my own page\n")
    with pytest.raises(DirectoryConflictError, match="2K.html exists and was not generated by crest"):
        generate("webcat-webstone", tmp_path)
    assert (tmp_path / "webcat" / "2K.html").read_bytes() == b"my own page\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["2K.html", "webcat"]  # nothing written


def test_unrelated_files_are_left_alone(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_bytes(b"hello\n")
    generate("webcat-webstone", tmp_path)
    assert (tmp_path / "index.html").read_bytes() == b"hello\n"
    assert verify(tmp_path) == []


def test_correct_files_without_manifest_are_adopted(tmp_path: Path) -> None:
    generate("webstone", tmp_path)
    (tmp_path / MANIFEST_NAME).unlink()
    before = _snapshot(tmp_path)
    result = generate_tree("webstone", tmp_path)
    assert (result.written, result.kept) == (0, 5)
    after = _snapshot(tmp_path)
    del after[MANIFEST_NAME]
    assert after == before


def test_files_only_the_previous_manifest_listed_are_removed(tmp_path: Path) -> None:
    generate("webstone", tmp_path)
    # Pretend an earlier generation also wrote old/gone.html (a zero weight keeps the sum at 1).
    doc = json.loads((tmp_path / MANIFEST_NAME).read_text())
    doc["files"].append(["old/gone.html", 6, "6B", 0.0])
    doc["file_count"] += 1
    doc["total_bytes"] += 6
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(doc))
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "gone.html").write_bytes(b"crest-")
    result = generate_tree("webstone", tmp_path)
    assert (result.written, result.kept, result.removed) == (0, 5, 1)
    assert not (tmp_path / "old").exists()  # the directory it left empty goes too
    assert load_manifest(tmp_path) == build_manifest("webstone")


def test_bad_input_fails_before_any_io(tmp_path: Path) -> None:
    target = tmp_path / "new"
    with pytest.raises(ValueError, match="unknown fileset"):
        generate("nope", target)
    with pytest.raises(ValueError, match="--connections applies only to specweb99"):
        generate("webstone", target, connections=3)
    assert not target.exists()


def test_root_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(DirectoryConflictError, match="is not a directory"):
        generate("webstone", tmp_path / "f")


def test_load_manifest_errors(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no directory"):
        load_manifest(tmp_path / "missing")
    with pytest.raises(ManifestError, match=f"has no {MANIFEST_NAME}: create a fileset there"):
        verify(tmp_path)
    (tmp_path / MANIFEST_NAME).write_text("{}")
    with pytest.raises(
        ManifestError, match="is not a valid crest manifest .not a crest fileset manifest.*delete it and run"
    ):
        verify(tmp_path)
    with pytest.raises(
        DirectoryConflictError, match="not a crest fileset manifest.*: delete it, or choose another directory"
    ):
        generate("webstone", tmp_path)


def test_first_line_states_size_and_path(tmp_path: Path) -> None:
    manifest = generate("webcat-cgi-html", tmp_path)
    for entry in manifest.files:
        with open(tmp_path / entry.path, "rb") as f:
            first = f.readline()
        assert first == header_line(entry)
        assert first == f"crest-file size={entry.size} path=/{entry.path}\n".encode()


def test_not_enough_space_is_refused_before_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(FilesetError, match=r"the webstone fileset needs 5.82 MB more in .* but only 1.00 KB is free"):
        generate("webstone", tmp_path / "d")
    assert not (tmp_path / "d").exists()


def test_verify_checks_the_kit_header_and_every_custom_ad_tag(tmp_path: Path) -> None:
    manifest = generate("specweb96", tmp_path)  # SPECweb's tree (10 directories), in the kit's format
    entry = next(e for e in manifest.files if e.path == "file_set/dir00003/class2_4")
    path = tmp_path / entry.path
    content = path.read_bytes()
    assert content.startswith(b"    51200 file_set/dir00003/class2_4\n")
    tags = [m.start() for m in re.finditer(rb"<!WEB99CAD>", content)]
    assert len(tags) == 50  # one per KiB of body
    assert verify(tmp_path) == []
    last = tags[-1] + 34  # the directory digits of the last tag
    path.write_bytes(content[:last] + b"9" + content[last + 1 :])
    assert verify(tmp_path) == [f"{entry.path}: content differs at byte {last}"]
