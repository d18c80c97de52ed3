"""Unit tests of crest.filesets' pure parts: manifests, weights and shares, sizes and names, file content, JSON.

Expected numbers are quoted from /work/shared/reference/specweb99.md,
webbench_webstone_netbench_dbench.md and DESIGN.md §4 (the WebCAT tables).
"""

from __future__ import annotations

import math
import re

import pytest

from crest.errors import ConfigError
from crest.filesets import (
    NAMES,
    FileEntry,
    Manifest,
    ManifestError,
    UnknownFilesetError,
    build_manifest,
    file_bytes,
    header_line,
)
from crest.filesets.content import LINE_BYTES, filler_line, iter_chunks
from crest.filesets.errors import FilesetError
from crest.filesets.specweb import FILE_ORDER, file_size, specweb99_directories, specweb99_file_probabilities, zipf

SPECWEB_SHARES = {"class0": 0.35, "class1": 0.50, "class2": 0.14, "class3": 0.01}


def test_names_are_the_contract() -> None:
    assert NAMES == (
        "specweb99",
        "specweb96",
        "webstone",
        "webcat-webstone",
        "webcat-large-filemix",
        "webcat-cgi-html",
        "webbench",
        "sizes",
        "specweb99-lengths",
    )


@pytest.mark.parametrize("name", NAMES)
def test_build_is_deterministic_and_weights_sum_to_one(name: str) -> None:
    first, second = build_manifest(name), build_manifest(name)
    assert first == second
    assert first.to_json() == second.to_json()
    assert first.fileset == name
    assert first.params["seed"] == 0
    assert abs(math.fsum(e.weight for e in first.files) - 1.0) < 1e-9
    assert all(e.weight > 0 and e.size > 0 for e in first.files)
    assert len({e.path for e in first.files}) == len(first.files)


@pytest.mark.parametrize("name", NAMES)
def test_json_round_trip_is_exact(name: str) -> None:
    manifest = build_manifest(name)
    assert Manifest.from_json(manifest.to_json()) == manifest


@pytest.mark.parametrize("name", NAMES)
def test_paths_are_short_and_url_safe(name: str) -> None:
    for entry in build_manifest(name).files:
        assert not entry.path.startswith("/")
        assert len(entry.path) <= 40
        assert all(c.isalnum() or c in "/._-" for c in entry.path), entry.path


# --- SPECweb99 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("connections", "directories"),
    # reference §1.6: dirs = int(25 + (400000/122000) × connections / 5); worked examples 100 → 90,
    # 1,000 → 680, 2,000 → 1,336, 10,000 → 6,582. At 61 the kit's float gives exactly 40 → 65,
    # where a rounded 0.6557 coefficient would give 64.
    [(1, 25), (61, 65), (100, 90), (1000, 680), (2000, 1336), (10000, 6582)],
)
def test_specweb99_directory_count(connections: int, directories: int) -> None:
    assert specweb99_directories(connections) == directories
    assert specweb99_directories(connections) == int(25 + (400000 / 122000) * connections / 5)


def test_specweb99_directory_count_in_manifest() -> None:
    manifest = build_manifest("specweb99", connections=100)
    assert manifest.params == {"connections": 100, "seed": 0, "directories": 90}
    assert len(manifest.files) == 90 * 36
    assert manifest.files[-1].path == "file_set/dir00089/class3_8"


def test_specweb99_default_is_one_connection() -> None:
    assert build_manifest("specweb99") == build_manifest("specweb99", connections=1)
    assert build_manifest("specweb99").params["directories"] == 25


def test_specweb99_sizes_and_names() -> None:
    manifest = build_manifest("specweb99")
    by_path = {e.path: e for e in manifest.files}
    # reference §1.3 table (class 0 from the integer formula: 921 for F=8).
    table = {
        0: (102, 204, 307, 409, 512, 614, 716, 819, 921),
        1: (1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 9216),
        2: (10240, 20480, 30720, 40960, 51200, 61440, 71680, 81920, 92160),
        3: (102400, 204800, 307200, 409600, 512000, 614400, 716800, 819200, 921600),
    }
    for directory in range(25):
        for cls, sizes in table.items():
            for number, size in enumerate(sizes):
                entry = by_path[f"file_set/dir{directory:05d}/class{cls}_{number}"]
                assert entry.size == size
                assert entry.cls == f"class{cls}"
    assert len(by_path) == 25 * 36
    # reference: 5,119,484 bytes per directory (kit constant MB_PER_DIRECTORY = 4.88).
    assert manifest.total_bytes() == 25 * 5_119_484
    assert by_path["file_set/dir00004/class1_3"].size == 4096  # the reference's example path


def test_specweb99_within_class_zipf_matches_reference() -> None:
    # reference §1.5: P(F | class) in percent for F = 0..8, H9 = 2.828968.
    expected = (3.928, 5.891, 8.837, 17.674, 35.349, 11.783, 7.070, 5.050, 4.419)
    probabilities = specweb99_file_probabilities()
    for p, pct in zip(probabilities, expected):
        assert abs(p * 100 - pct) < 0.0006
    assert abs(math.fsum(1 / r for r in range(1, 10)) - 2.828968) < 1e-6
    assert FILE_ORDER == (4, 3, 5, 2, 6, 1, 7, 8, 0)
    ranked = sorted(range(9), key=lambda f: -probabilities[f])
    assert tuple(ranked) == FILE_ORDER  # most popular first


def test_specweb99_weights_are_directory_times_class_times_file() -> None:
    manifest = build_manifest("specweb99", connections=100)
    p_dir = zipf(90)
    p_file = specweb99_file_probabilities()
    shares = (0.35, 0.50, 0.14, 0.01)
    for entry in manifest.files:
        directory = int(entry.path[len("file_set/dir") :][:5])
        cls, number = (int(x) for x in entry.path.rsplit("class", 1)[1].split("_"))
        assert entry.weight == pytest.approx(p_dir[directory] * shares[cls] * p_file[number], rel=1e-12)
    # Directory 0 is the most popular, then Zipf(1): directory d weighs 1/(d+1) of directory 0.
    per_dir = [math.fsum(e.weight for e in manifest.files[d * 36 : (d + 1) * 36]) for d in range(90)]
    assert per_dir[0] == max(per_dir)
    assert per_dir[9] == pytest.approx(per_dir[0] / 10, rel=1e-12)


def test_specweb99_class_shares_and_mean_size() -> None:
    manifest = build_manifest("specweb99", connections=100)
    for cls, share in manifest.class_shares().items():
        assert abs(share - SPECWEB_SHARES[cls]) < 1e-9
    # reference §1.6: average static body 14,727 bytes.
    assert round(manifest.mean_size()) == 14727


# --- SPECweb96 -------------------------------------------------------------------------


def test_specweb96_layout_and_uniform_weights() -> None:
    manifest = build_manifest("specweb96")
    assert manifest.params == {"connections": None, "seed": 0, "directories": 10}
    assert len(manifest.files) == 360
    assert manifest.total_bytes() == 10 * 5_119_484
    for cls, share in manifest.class_shares().items():
        assert abs(share - SPECWEB_SHARES[cls]) < 1e-9
    for entry in manifest.files:  # uniform over 10 directories and over 9 files within a class
        assert entry.weight == pytest.approx(SPECWEB_SHARES[entry.cls] / 90, rel=1e-12)
    assert {e.path for e in manifest.files} == {
        e.path for e in build_manifest("specweb99", connections=1).files if int(e.path[12:17]) < 10
    }


# --- WebStone and WebCAT ---------------------------------------------------------------


def test_webstone_standard_filelist() -> None:
    manifest = build_manifest("webstone")
    # reference §2.3: filelist.standard, weights 350/500/140/9/1 per mille.
    assert [(e.path, e.size, e.weight) for e in manifest.files] == [
        ("file500.html", 500, 0.35),
        ("file5k.html", 5125, 0.5),
        ("file50k.html", 51250, 0.14),
        ("file500k.html", 512500, 0.009),
        ("file5m.html", 5248000, 0.001),
    ]
    assert [e.cls for e in manifest.files] == ["500B", "5K", "50K", "500K", "5M"]
    # 0.35·500 + 0.5·5125 + 0.14·51250 + 0.009·512500 + 0.001·5248000
    assert manifest.mean_size() == pytest.approx(19773.0)


def _shares_in_percent(name: str) -> dict[str, float]:
    return {cls: share * 100 for cls, share in build_manifest(name).class_shares().items()}


def _assert_shares(actual: dict[str, float], expected: dict[str, float]) -> None:
    assert actual.keys() == expected.keys()
    for cls, pct in expected.items():
        assert abs(actual[cls] - pct) < 1e-7, cls  # 1e-9 in shares, expressed in percent


def test_webcat_webstone_shares() -> None:
    # 40% 2K/3K, 25% 1K/5K, 15% 4K/6K, 5% 7K, 4% 8K/9K/10K/11K, 4% 12K/14K/15K/17K/18K, 6% 33K, 1% 200K
    expected = {"2K": 20, "3K": 20, "1K": 12.5, "5K": 12.5, "4K": 7.5, "6K": 7.5, "7K": 5}
    expected |= {k: 1.0 for k in ("8K", "9K", "10K", "11K")}
    expected |= {k: 0.8 for k in ("12K", "14K", "15K", "17K", "18K")}
    expected |= {"33K": 6, "200K": 1}
    _assert_shares(_shares_in_percent("webcat-webstone"), expected)
    sizes = {e.cls: e.size for e in build_manifest("webcat-webstone").files}
    assert sizes["2K"] == 2048 and sizes["33K"] == 33 * 1024 and sizes["200K"] == 200 * 1024


def test_webcat_large_filemix_shares() -> None:
    expected = {"256B": 8, "512B": 9, "1K": 8, "2K": 17, "3K": 12, "4K": 7, "6K": 10, "8K": 5}
    expected |= {"16K": 10, "32K": 7, "64K": 4, "256K": 1, "512K": 1, "1M": 1}
    _assert_shares(_shares_in_percent("webcat-large-filemix"), expected)
    sizes = {e.cls: e.size for e in build_manifest("webcat-large-filemix").files}
    assert sizes["256B"] == 256 and sizes["1M"] == 1048576


def test_webcat_cgi_html_static_part_normalised() -> None:
    manifest = build_manifest("webcat-cgi-html")
    # The 25 % static part: 2% 256K, 2% 512, 2% 1K, 3% 2K, 3% 3K, 2% 4K, 3% 6K, 1% 8K, 3% 16K,
    # 2% 32K, 1% 64K, 1% 256K, each divided by 25 %.
    published = [2, 2, 2, 3, 3, 2, 3, 1, 3, 2, 1, 1]
    assert [e.weight * 25 for e in manifest.files] == pytest.approx(published, abs=1e-9)
    assert [e.cls for e in manifest.files] == [
        "256K",
        "512B",
        "1K",
        "2K",
        "3K",
        "4K",
        "6K",
        "8K",
        "16K",
        "32K",
        "64K",
        "256K",
    ]
    # The two 256K rows stay two distinct files.
    big = [e for e in manifest.files if e.cls == "256K"]
    assert [e.path for e in big] == ["webcat/256K.html", "webcat/256K-2.html"]
    assert all(e.size == 262144 for e in big)
    _assert_shares(
        {cls: share * 100 for cls, share in manifest.class_shares().items()},
        {"256K": 12, "512B": 8, "1K": 8, "2K": 12, "3K": 12, "4K": 8, "6K": 12, "8K": 4, "16K": 12, "32K": 8, "64K": 4},
    )


# --- webbench and sizes ----------------------------------------------------------------


def test_webbench_tree() -> None:
    manifest = build_manifest("webbench")
    assert len(manifest.files) == 6000
    counts: dict[str, int] = {}
    for entry in manifest.files:
        counts[entry.cls] = counts.get(entry.cls, 0) + 1
    assert counts == {"class0": 2100, "class1": 3000, "class2": 840, "class3": 60}
    for cls, share in manifest.class_shares().items():
        assert abs(share - SPECWEB_SHARES[cls]) < 1e-9
    for entry in manifest.files:  # uniform within a class
        assert entry.weight == pytest.approx(SPECWEB_SHARES[entry.cls] / counts[entry.cls], rel=1e-12)
    # Sizes spread round-robin over the class's nine specweb sizes.
    class1 = [e.size for e in manifest.files if e.cls == "class1"]
    assert sorted(set(class1)) == [1024 * k for k in range(1, 10)]
    assert max(class1.count(s) for s in set(class1)) - min(class1.count(s) for s in set(class1)) <= 1
    assert manifest.files[0].path == "wb/class0/0000.html"
    assert manifest.files[-1].path == "wb/class3/0059.html"
    # The documented total (docs/filesets.md): 89,138,369 bytes ≈ 89 MB.
    assert manifest.total_bytes() == 89_138_369


def test_sizes_sweep() -> None:
    manifest = build_manifest("sizes")
    sizes = [e.size for e in manifest.files]
    assert sizes[0] == 1 and sizes[-1] == 10_000_000
    assert sizes == sorted(sizes) and len(sizes) == 22
    assert sizes[:9] == [1, 2, 5, 10, 20, 50, 100, 200, 500]
    assert manifest.total_bytes() == 18_888_888
    assert {e.weight for e in manifest.files} == {1 / 22}
    assert [e.cls for e in manifest.files][8:12] == ["500B", "1kB", "2kB", "5kB"]
    assert manifest.files[-1].cls == "10MB" and manifest.files[-1].path == "sizes/10000000.html"


# --- parameters and errors -------------------------------------------------------------


def test_unknown_name_lists_known_names() -> None:
    with pytest.raises(UnknownFilesetError) as info:
        build_manifest("specweb2005")
    message = str(info.value)
    assert "\n" not in message
    assert all(name in message for name in NAMES)
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "specweb99"])
def test_connections_only_for_specweb99(name: str) -> None:
    with pytest.raises(FilesetError, match=f"--connections applies only to specweb99.*drop it for {name}"):
        build_manifest(name, connections=10)


@pytest.mark.parametrize("bad", [0, -5, True, 2.5, "10"])
def test_bad_connections(bad: object) -> None:
    with pytest.raises(FilesetError, match="invalid connections"):
        build_manifest("specweb99", connections=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, 1.0, None, False])
def test_bad_seed(bad: object) -> None:
    with pytest.raises(FilesetError, match="invalid seed"):
        build_manifest("webstone", seed=bad)  # type: ignore[arg-type]


def test_seed_is_recorded() -> None:
    manifest = build_manifest("webstone", seed=7)
    assert manifest.params["seed"] == 7
    assert manifest.files == build_manifest("webstone").files  # no current fileset is random


# --- file content ----------------------------------------------------------------------


def test_header_line() -> None:
    entry = FileEntry(path="webcat/2K.html", size=2048, cls="2K", weight=1.0)
    assert header_line(entry) == b"crest-file size=2048 path=/webcat/2K.html\n"
    content = file_bytes(entry)
    assert len(content) == 2048
    assert content.startswith(header_line(entry))


def test_specweb_files_start_with_the_kits_header_line() -> None:
    # The reference's example (specweb99.md §1.7), and the SPECweb99 harness's check of a body.
    entry = FileEntry(path="file_set/dir00000/class1_0", size=1024, cls="class1", weight=1.0)
    assert header_line(entry) == b"     1024 file_set/dir00000/class1_0\n"
    content = file_bytes(entry)
    assert len(content) == 1024 and content.startswith(header_line(entry))
    assert re.search(rb"\d+\s+(file_set.*class.*)", content)  # the harness pattern, unanchored


@pytest.mark.parametrize("cls,tagged", [(0, False), (1, True), (2, True), (3, False)])
def test_class_1_and_2_files_carry_custom_ad_tags_at_the_kits_offsets(cls: int, tagged: bool) -> None:
    for number in range(9):
        size = file_size(cls, number)
        entry = FileEntry(path=f"file_set/dir00004/class{cls}_{number}", size=size, cls=f"class{cls}", weight=1.0)
        content = file_bytes(entry)
        assert len(content) == size and all(32 <= b < 127 or b == 10 for b in content)
        tags = [m.start() for m in re.finditer(rb"<!WEB99CAD>", content)]
        if not tagged:
            assert tags == []
            continue
        assert len(tags) == max(1, -(-(size - len(header_line(entry))) // (16 * LINE_BYTES)))  # one per KiB of body
        for at in tags:
            tag = content[at : at + 62]
            assert tag.startswith(b'<!WEB99CAD><IMG SRC="/file_set/dir') and tag.endswith(b'"><!/WEB99CAD>')
            assert (tag[34:39], tag[45:46], tag[47:48]) == (b"00000", b"0", b"0")


def test_content_does_not_depend_on_the_chunk_size() -> None:
    entry = FileEntry(path="file_set/dir00001/class2_5", size=61440, cls="class2", weight=1.0)
    whole = file_bytes(entry)
    for chunk in (LINE_BYTES, LINE_BYTES * 3, LINE_BYTES * 16, LINE_BYTES * 1000):
        assert b"".join(iter_chunks(entry, chunk)) == whole


@pytest.mark.parametrize("size", [0, 1, 10, 39, 40, 41, 103, 5000, LINE_BYTES * 1024 * 3 + 17])
def test_file_bytes_exact_size_printable(size: int) -> None:
    entry = FileEntry(path="webcat/2K.html", size=size, cls="2K", weight=1.0)
    content = file_bytes(entry)
    assert len(content) == size
    assert content == file_bytes(entry)  # deterministic
    assert all(32 <= b < 127 or b == 10 for b in content)
    header = header_line(entry)
    if size <= len(header):
        assert content == header[:size]  # truncated header
    else:
        assert content.startswith(header)
        body = content[len(header) :]
        line = filler_line(entry.path)
        assert body == (line * (len(body) // LINE_BYTES + 1))[: len(body)]


def test_chunks_concatenate_to_file_bytes() -> None:
    entry = FileEntry(path="sizes/200000.html", size=200_000, cls="200kB", weight=1.0)
    small = list(iter_chunks(entry, chunk_bytes=LINE_BYTES * 10))
    assert b"".join(small) == file_bytes(entry)
    assert max(len(c) for c in small) == LINE_BYTES * 10
    with pytest.raises(ValueError):
        list(iter_chunks(entry, chunk_bytes=100))


def test_filler_depends_on_path() -> None:
    assert filler_line("a") != filler_line("b")
    assert len(filler_line("a")) == LINE_BYTES and filler_line("a").endswith(b"\n")


# --- manifest JSON validation ----------------------------------------------------------


def _tampered(old: str, new: str) -> str:
    text = build_manifest("webstone").to_json()
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("not json", "not valid JSON"),
        ('{"format": "other"}', "not a crest fileset manifest"),
        (_tampered('"file500.html"', '"../../etc/passwd"'), "unsafe path"),
        (_tampered('"file500.html"', '"/abs.html"'), "unsafe path"),
        (_tampered('"file500.html", 500', '"file500.html", -1'), "invalid size"),
        (_tampered("0.35]", "0.36]"), "weights sum to"),
        (_tampered('"file_count": 5', '"file_count": 6'), "file_count or total_bytes"),
        (_tampered('"file5k.html"', '"file500.html"'), "lists a path twice"),
    ],
)
def test_from_json_rejects_bad_manifests(text: str, fragment: str) -> None:
    with pytest.raises(ManifestError, match=fragment) as info:
        Manifest.from_json(text)
    assert "\n" not in str(info.value)


def test_connections_upper_bound() -> None:
    assert build_manifest("specweb99", connections=2000).params["directories"] == 1336
    with pytest.raises(FilesetError, match="too many for specweb99: at most 100,000"):
        build_manifest("specweb99", connections=100_001)
