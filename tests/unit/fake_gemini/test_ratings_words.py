"""The simulated rating judge reads words of any script: a Japanese answer was once rated as
having "no words" (its word pattern was ASCII only)."""

from __future__ import annotations

from evalq.fake_gemini.skills.ratings import Material, assess


def test_a_japanese_answer_has_words() -> None:
    seen = assess(
        "はい、大丈夫です。パスワードは設定画面で変更できます。", Material(metric="fluency")
    )
    assert "the response has no words" not in seen.notes
    assert seen.quality > 0.0


def test_an_answer_of_punctuation_alone_still_has_none() -> None:
    assert assess("... !!! ???", Material(metric="fluency")).notes == ["the response has no words"]
