"""The fake server's default brain: a deterministic simulated judge that hands each request to
the skill of its metric, keeping the one state a judge has: a small cache of analysed images,
since a validator asks many questions about one image."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from evalq.fake_gemini.protocol import FakeMedia, FakeRequest
from evalq.fake_gemini.vision import DEFAULT_MAX_SIDE, Scene, analyse

# ---- the dispatcher ------------------------------------------------------------------------------


class SimulatedJudge:
    """The Brain the fake server uses by default; stateless apart from a small scene cache."""

    def __init__(self, *, max_side: int = DEFAULT_MAX_SIDE, cache_size: int = 64) -> None:
        self._max_side = max_side
        self._cache_size = cache_size
        self._scenes: OrderedDict[bytes, Scene] = OrderedDict()
        self._lock = threading.Lock()

    def reply(self, request: FakeRequest) -> str:
        from evalq.fake_gemini.drift import drifted
        from evalq.fake_gemini.skills import gecko_image, skills

        for skill in skills():
            if (answer := skill(request, self)) is not None:
                return drifted(request, answer)
        return drifted(request, gecko_image.answer(request, self))

    def scene_for(self, media: list[FakeMedia]) -> Scene:
        """The scene of the first image part; a validator asks many questions per image."""
        image = next((part for part in media if part.mime_type.lower().startswith("image/")), None)
        if image is None:
            sent = ", ".join(part.mime_type for part in media)
            return Scene.empty(f"no image was attached{f'; got {sent}' if sent else ''}")
        if image.data is None:
            return Scene.empty(
                f"the image was sent by reference ({image.uri}), which I cannot open"
            )
        return self._cached_scene(image.data)

    def _cached_scene(self, data: bytes) -> Scene:
        key = hashlib.sha256(data).digest()
        with self._lock:
            scene = self._scenes.get(key)
            if scene is not None:
                self._scenes.move_to_end(key)
                return scene
        scene = analyse(data, max_side=self._max_side)
        with self._lock:
            self._scenes[key] = scene
            while len(self._scenes) > self._cache_size:
                self._scenes.popitem(last=False)
        return scene
