"""The simulated judge's rubric skill: plausible tests for a text prompt, checked from the words
of the response, so a response that does what its prompt asks passes more of them."""

from __future__ import annotations

from evalq.fake_gemini.skills.text_rubric import check_test, write_tests


def test_tests_follow_what_the_prompt_asks() -> None:
    tests = write_tests("List three benefits of exercise in under 30 words.")["tests"]
    said = {t["test"]: (t["tag"], t["importance"]) for t in tests}
    assert said["The response mentions exercise."] == ("content", "high")
    assert said["The response is under 30 words."] == ("instruction_following", "high")
    assert said["The response is a list."] == ("format", "medium")
    assert all(t["justification"].startswith("[simulated judge]") for t in tests)


def test_a_response_is_checked_from_its_words() -> None:
    good = "- Exercise builds strength.\n- It lifts mood.\n- It helps sleep."
    assert check_test("The response mentions exercise.", good)[0] == "yes"
    assert check_test("The response is a list.", good)[0] == "yes"
    assert check_test("The response is under 5 words.", good)[0] == "no"
    assert check_test("The response contains no abusive language.", "You idiot.")[0] == "no"
    assert check_test("The response talks about sleep.", good)[0] == "yes"
    assert check_test("The response talks about diet.", good)[0] == "no"
