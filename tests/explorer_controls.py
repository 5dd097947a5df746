"""Shared by the explorer tests: move an explorer's first control one step, as a reader would, and find
the targets of the page's explorers that are too small to tap."""

from __future__ import annotations


def operate(browser, root) -> None:
    """Move the first control of the explorer ``root`` (a WebElement) by one step: the next option of
    a menu, one notch of a slider (away from the end it is at), a checkbox, or the next row by keyboard."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    control = root.find_elements(By.CSS_SELECTOR, "select, input, [data-index]")[0]
    if control.tag_name == "select":
        Select(control).select_by_index(1)
    elif control.get_attribute("type") == "range":
        at_end = control.get_attribute("value") == control.get_attribute("max")
        control.send_keys(Keys.ARROW_LEFT if at_end else Keys.ARROW_RIGHT)
    elif control.get_attribute("type") == "checkbox":
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", control)
        control.click()
    else:
        browser.execute_script("arguments[0].focus()", control)
        control.send_keys(Keys.ARROW_DOWN)


# Runs in the page: every target of every explorer smaller than 24 x 24 CSS px (WCAG 2.2, 2.5.8), as
# "explorer: what WxH": its menus and sliders, a check box with its label (which toggles it too), and
# each row the reader points at (its label with the band of the row around it, ``rect.row-target``).
_SMALL_TARGETS = r"""
const small = [];
const size = (r) => `${r.width.toFixed(1)}x${r.height.toFixed(1)}`;
for (const ex of document.querySelectorAll('[data-explorer]')) {
  for (const el of ex.querySelectorAll('.explorer-controls select, .explorer-controls input')) {
    const target = el.type === 'checkbox' && el.closest('label') ? el.closest('label') : el;
    const r = target.getBoundingClientRect();
    if (r.width && (r.width < 24 || r.height < 24))
      small.push(`${ex.dataset.explorer}: ${el.tagName.toLowerCase()}[${el.type || ''}] ${size(r)}`);
  }
  for (const el of ex.querySelectorAll('svg [data-index]')) {
    const band = ex.querySelector(`rect.row-target[data-row="${el.dataset.index}"]`);
    const a = el.getBoundingClientRect(), b = (band || el).getBoundingClientRect();
    const r = {width: Math.max(a.right, b.right) - Math.min(a.left, b.left),
               height: Math.max(a.bottom, b.bottom) - Math.min(a.top, b.top)};
    if (a.width && (r.width < 24 || r.height < 24))
      small.push(`${ex.dataset.explorer}: row ${el.dataset.index} “${el.textContent}” ${size(r)}`);
  }
}
return small;
"""


def small_targets(browser) -> list[str]:
    """What a finger cannot tap in the page's explorers: each target under 24 x 24 CSS px, described."""
    return browser.execute_script(_SMALL_TARGETS)
