"""Tests of the notebooks' check cells (`jl.Answer`, `jl.check`): plain asserts, no pytest.

    python notebooks/test_jl.py

Every exercise of every notebook rests on these two: a tolerance one step too wide, a tie read
as one answer, or a wrong answer that does not raise would let a student's wrong prediction
pass as right.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jl  # noqa: E402


def raises(error, call, *args) -> str:
    """The message of the `error` that `call(*args)` raises; fails when it raises none."""
    try:
        call(*args)
    except error as e:
        return str(e)
    raise AssertionError(f"{call.__name__}{args} raised no {error.__name__}")


def test_relative_tolerance_edges():
    a = jl.Answer(2.0, "why", tolerance=0.1)  # right within 0.2 of 2.0
    assert a.agrees(2.19) and a.agrees(1.81) and a.agrees(2)
    assert not a.agrees(2.21) and not a.agrees(1.79)
    assert jl.Answer(-4.0, "why", tolerance=0.5).agrees(-2.0), "the slack of a negative value"
    assert jl.Answer(0.0, "why").agrees(0) and not jl.Answer(0.0, "why").agrees(1e-9)


def test_absolute_tolerance_edges():
    a = jl.Answer(0.9744, "why", absolute=0.01)
    assert a.agrees(0.9744 + 0.0099) and a.agrees(0.9744 - 0.0099)
    assert not a.agrees(0.9744 + 0.0101) and not a.agrees(1.0)
    assert a.shown() == "0.9744 (± 0.01)"
    assert jl.Answer(2.0, "why", tolerance=0.03).shown() == "2 (± 3%)"


def test_numbers_refuse_what_is_not_a_number():
    a = jl.Answer(1.0, "why")
    assert "a number" in raises(ValueError, a.agrees, "1.0")
    assert "a number" in raises(ValueError, a.agrees, True), "a bool is not a number"


def test_booleans():
    a = jl.Answer(True, "why")
    assert a.agrees(True) and not a.agrees(False)
    assert not jl.Answer(False, "why").agrees(True)
    assert "True or False" in raises(ValueError, a.agrees, 1), "1 is not True"
    assert "True or False" in raises(ValueError, a.agrees, "True")


def test_choices_and_ties():
    one = jl.Answer("less than half", "why", choices=("less than half", "more than half"))
    assert one.agrees("less than half") and one.agrees("Less Than Half")
    assert not one.agrees("more than half")
    tie = jl.Answer(("breaker", "throttle"), "why", choices=("breaker", "throttle", "ratio"))
    assert tie.agrees("breaker") and tie.agrees("throttle") and not tie.agrees("ratio")
    assert tie.shown() == "breaker or throttle"


def test_a_choice_outside_the_list_is_refused():
    a = jl.Answer("lower", "why", choices=("lower", "same", "higher"))
    assert "answer one of" in raises(ValueError, a.agrees, "faster")
    assert "answer one of" in raises(ValueError, a.agrees, 3)


def test_sets():
    names = ("retries_3", "token_bucket", "throttle", "breaker")
    a = jl.Answer(frozenset({"token_bucket", "throttle", "breaker"}), "why", choices=names)
    assert a.agrees(["breaker", "throttle", "token_bucket"]), "any order"
    assert a.agrees(("Token_Bucket", "throttle", "breaker", "breaker")), "case, repeats"
    assert not a.agrees(["token_bucket"]), "one of a tie is not the set"
    assert not a.agrees(["token_bucket", "throttle", "breaker", "retries_3"]), "one too many"
    assert "not ['deadline']" in raises(ValueError, a.agrees, ["throttle", "deadline"])
    assert "a list" in raises(ValueError, a.agrees, "throttle"), "a name alone is not a list"
    assert a.shown() == "[breaker, throttle, token_bucket]"


def test_check_raises_on_a_wrong_answer_and_says_why():
    answers = {"load": jl.Answer(1.875, "1 + p + p² + p³", tolerance=0.03),
               "succeeds": jl.Answer(True, "1 − p⁴ > 0.9")}
    jl.check({"load": None, "succeeds": None}, answers)  # unanswered: shows, never raises
    jl.check({"load": 1.9, "succeeds": True}, answers)
    message = raises(jl.WrongPrediction, jl.check, {"load": 2.73, "succeeds": True}, answers)
    assert "load: you predicted 2.73" in message and "1 + p + p² + p³" in message, message
    assert "succeeds" not in message, "only the wrong answer is named"
    message = raises(jl.WrongPrediction, jl.check, {"load": None, "succeeds": False}, answers)
    assert "succeeds" in message and "load" not in message, message


def test_check_refuses_questions_that_differ():
    answers = {"load": jl.Answer(1.0, "why")}
    assert "different questions" in raises(KeyError, jl.check, {"lode": None}, answers)
    assert "different questions" in raises(KeyError, jl.check, {"load": None, "x": 1}, answers)


def test_fresh_folder_deletes_only_what_jitterlab_wrote_inside_its_root():
    import json
    import shutil
    import tempfile

    base = jl.OUT / f"test-jl-{__import__('os').getpid()}"
    try:
        # Paths elsewhere: never deleted, refused before anything is looked at.
        outside = Path(tempfile.mkdtemp(prefix="test-jl-"))
        (outside / "keep.txt").write_text("mine")
        for out in [str(outside), "..", "a/../..", "", "."]:
            assert "relative name" in raises(ValueError, jl.fresh_folder, out), out
        assert (outside / "keep.txt").exists()
        base.mkdir(parents=True)
        # A link inside the root that leads out of it.
        (base / "link").symlink_to(outside)
        assert "leads outside" in raises(ValueError, jl.fresh_folder, f"{base.name}/link/x")
        assert "leads outside" in raises(ValueError, jl.fresh_folder, f"{base.name}/link")
        assert (outside / "keep.txt").exists()
        # A folder of the student's (no journal), and a result folder with a file of theirs.
        mine = base / "mine"
        mine.mkdir()
        (mine / "notes.txt").write_text("mine")
        assert "not a folder jitterlab wrote" in raises(ValueError, jl.fresh_folder, f"{base.name}/mine")
        ours = base / "ours"
        ours.mkdir()
        (ours / "units.jsonl").write_text(json.dumps({"jitterlab_journal": 1, "units": 1}) + "\n")
        (ours / "meta.json").write_text(json.dumps({"files": ["summary.csv", "meta.json"]}))
        (ours / "summary.csv").write_text("x")
        (ours / "notes.txt").write_text("mine")
        assert "notes.txt" in raises(ValueError, jl.fresh_folder, f"{base.name}/ours")
        assert (mine / "notes.txt").exists() and (ours / "notes.txt").exists()
        # Once it holds only jitterlab's files, it goes.
        (ours / "notes.txt").unlink()
        assert jl.fresh_folder(f"{base.name}/ours") == ours and not ours.exists()
        shutil.rmtree(outside)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    tests = [(name, f) for name, f in sorted(globals().items()) if name.startswith("test_")]
    for name, test in tests:
        test()
        print(f"ok     {name}")
    print(f"test_jl: {len(tests)} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
