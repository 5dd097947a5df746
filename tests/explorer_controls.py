"""Shared by the explorer tests: move an explorer's first control one step, as a reader would."""

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
