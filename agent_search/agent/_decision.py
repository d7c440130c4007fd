"""The auto-search decision: request option × hook × user data × assistant config.

Order of precedence (first rule that applies wins):

1. ``Options.search is False`` → skip (the request forces it off);
2. the create hook returned ``search: false`` → skip;
3. the create hook returned messages (it handled search itself) and not ``search: true``
   → skip;
4. user data sources already gave ``>= skip_threshold`` results (threshold > 0) → skip;
5. ``Options.search is True`` or the hook returned ``search: true`` → run (forced);
6. the assistant has a search config (some type switched on) → run;
7. otherwise → skip.

Rule 3 ranks above rule 5 because the hook is the assistant's own, more specific decision
for this very request; a caller that must override a hook can pass ``search=False``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Decision:
    run: bool
    reason: str


def decide_auto_search(*, option: bool | None, has_search_config: bool,
                       hook_search: bool | None = None, hook_handled: bool = False,
                       user_results: int = 0, skip_threshold: int = 5) -> Decision:
    if option is False:
        return Decision(False, "disabled by request (search=false)")
    if hook_search is False:
        return Decision(False, "disabled by create hook (search=false)")
    if hook_handled and hook_search is not True:
        return Decision(False, "handled by create hook")
    if skip_threshold > 0 and user_results >= skip_threshold:
        return Decision(False, f"user data gave {user_results} results (>= {skip_threshold})")
    if option is True:
        return Decision(True, "forced by request (search=true)")
    if hook_search is True:
        return Decision(True, "forced by create hook (search=true)")
    if has_search_config:
        return Decision(True, "assistant search config")
    return Decision(False, "no search config")
