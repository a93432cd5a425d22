from __future__ import annotations

import pytest

from benchmarks.report.readme_figures import (
    END,
    README,
    RESULTS,
    ROOT_END,
    ROOT_README,
    ROOT_START,
    START,
    load_results,
    main,
    render,
    render_root,
    replace_block,
    root_block,
)


class TestReplaceBlock:
    def test_only_the_block_changes(self):
        """Text outside the markers is kept byte for byte; the block is replaced whole."""
        text = f"head\n{START}\nold figure 1.0%\n{END}\ntail\n"
        assert replace_block(text, "new\n") == f"head\n{START}\nnew\n{END}\ntail\n"

    @pytest.mark.parametrize("text", ["no markers", f"{END}\n{START}\n", f"{START} only"])
    def test_missing_or_reversed_markers_raise(self, text):
        """A README without both markers, in order, is refused with the markers named."""
        with pytest.raises(ValueError, match="needs the markers"):
            replace_block(text, "x\n")


class TestCommittedReadme:
    def test_readme_figures_match_results_json(self):
        """Every figure in benchmarks/README.md's block is what results.json renders to."""
        text = README.read_text(encoding="utf-8")
        block = text[text.index(START) + len(START) + 1 : text.index(END)]
        assert block == render(load_results(RESULTS))

    def test_check_mode_reports_up_to_date(self, capsys):
        """`python -m benchmarks.report.readme_figures --check` passes on the committed files."""
        assert main(["--check"]) == 0
        assert "up to date" in capsys.readouterr().out

    def test_check_mode_catches_a_hand_edit(self, tmp_path, capsys):
        """A figure typed by hand into the block makes --check fail."""
        edited = tmp_path / "README.md"
        text = README.read_text(encoding="utf-8")
        edited.write_text(text.replace(END, "- B saves 99.9% (typed by hand)\n" + END), "utf-8")
        assert main(["--check", "--readme", str(edited)]) == 1
        assert "stale" in capsys.readouterr().out


class TestRootReadme:
    def test_root_table_matches_the_results(self):
        """The root README's figures table is what the committed results render to."""
        text = ROOT_README.read_text(encoding="utf-8")
        block = text[text.index(ROOT_START) + len(ROOT_START) + 1 : text.index(ROOT_END)]
        assert block == root_block(RESULTS.parent)

    def test_the_table_follows_the_results(self):
        """A changed throughput point changes the table (the figures are not typed by hand)."""
        results = load_results(RESULTS)
        throughput = {
            "goals": {"append_ratio": 1.3, "reopen_ratio": 1.3, "compaction_ratio": 0.8},
            "points": [
                {"store": "jsonl", "events": 10, "append_ratio": 1.0, "reopen_ratio": 2.0,
                 "compaction_ratio": 0.5},
            ],
        }  # fmt: skip
        startup = {"commands": {"--version": {"ratio": 3.0, "goal": 2.5, "met": False}}}
        table = render_root(results, throughput, startup)
        assert "| 1.00x (10-10 events; goal <= 1.3x, met at 1 of 1 sizes) |" in table
        assert "| 2.00x (10-10 events; goal <= 1.3x, met at 0 of 1 sizes) |" in table
        assert "3.00x (goal <= 2.5x: not met)" in table

    def test_a_hand_edit_is_caught(self, tmp_path, capsys):
        """A figure typed into the root table makes --check fail."""
        edited = tmp_path / "README.md"
        text = ROOT_README.read_text(encoding="utf-8")
        edited.write_text(text.replace(ROOT_END, "| typed | 99x |\n" + ROOT_END), "utf-8")
        assert main(["--check", "--root-readme", str(edited)]) == 1
        assert "stale" in capsys.readouterr().out
