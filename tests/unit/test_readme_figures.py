from __future__ import annotations

import pytest

from benchmarks.readme_figures import (
    END,
    README,
    RESULTS,
    START,
    load_results,
    main,
    render,
    replace_block,
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
        """`python -m benchmarks.readme_figures --check` passes on the committed files."""
        assert main(["--check"]) == 0
        assert "up to date" in capsys.readouterr().out

    def test_check_mode_catches_a_hand_edit(self, tmp_path, capsys):
        """A figure typed by hand into the block makes --check fail."""
        edited = tmp_path / "README.md"
        text = README.read_text(encoding="utf-8")
        edited.write_text(text.replace(END, "- B saves 99.9% (typed by hand)\n" + END), "utf-8")
        assert main(["--check", "--readme", str(edited)]) == 1
        assert "stale" in capsys.readouterr().out
