#!/usr/bin/python3
"""Clicks through an `appdata audit --format html` report of many in a real browser (Chromium,
driven by chromedriver through Selenium) and prints what it saw, one fact per line, for
HTMLReportTests to compare: the trail and the cells drawn at the top, after zooming into the
largest container, into its largest folder, and back out through the trail.

Usage: html-click-test.py REPORT.html
"""
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By


def state(driver):
    body = driver.find_element(By.TAG_NAME, "body")
    top = driver.find_elements(By.CSS_SELECTOR, "#map rect.cell[data-depth='0']")
    names = [cell.get_attribute("data-name") for cell in top]
    sizes = driver.find_elements(By.CSS_SELECTOR, "#map text.size")
    shares = driver.find_elements(By.CSS_SELECTOR, "#map rect.share")
    crumbs = driver.find_elements(By.CSS_SELECTOR, "#crumbs a")
    return body.get_attribute("data-trail"), names, len(sizes), len(shares), len(crumbs)


def report(label, driver):
    trail, names, sizes, shares, links = state(driver)
    print(f"{label} trail: {trail}")
    print(f"{label} first cells: {', '.join(names[:3])}")
    print(f"{label} cells: {len(names)}; sizes written: {'yes' if sizes else 'no'}; "
          f"category shares: {'yes' if shares else 'no'}; trail links: {links}")
    return names


def click_cell(driver, name):
    cell = driver.find_element(By.CSS_SELECTOR, f"#map rect.cell[data-depth='0'][data-name='{name}']")
    # A real click in the middle of the cell, as a person clicks: it may land on a cell drawn
    # inside it, which must zoom into this one all the same.
    ActionChains(driver).move_to_element(cell).click().perform()


def main():
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get("file://" + sys.argv[1])
        names = report("top", driver)
        click_cell(driver, names[0])
        inner = report("zoom 1", driver)
        click_cell(driver, inner[0])
        report("zoom 2", driver)
        # Back out through the trail: its first link is the top.
        driver.find_elements(By.CSS_SELECTOR, "#crumbs a")[0].click()
        report("back", driver)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
