#!/usr/bin/python3
"""Hovers and clicks the history chart of an `appdata audit --format html` report of a folder of
backups in a real browser (Chromium through chromedriver, Selenium) and prints what it saw, one
fact per line, for HTMLReportTests to compare: the charts drawn, the tooltip over a point, and
where a click on a line goes.

Usage: html-history-test.py REPORT.html ID DATE
       (hovers the point of container ID at DATE, then clicks that container's line)
"""
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By


def main():
    report, container, date = sys.argv[1:4]
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get("file://" + report)
        charts = driver.find_elements(By.CSS_SELECTOR, "svg.chart")
        print(f"charts: {len(charts)}")
        print(f"lines: {len(driver.find_elements(By.CSS_SELECTOR, 'svg.chart polyline'))}")
        point = driver.find_element(By.CSS_SELECTOR, f"svg.chart circle[data-id='{container}'][data-date='{date}']")
        ActionChains(driver).move_to_element(point).perform()
        tooltip = driver.find_element(By.ID, "tooltip")
        print(f"tooltip shown: {tooltip.is_displayed()}")
        print(f"tooltip: {tooltip.text}")
        ActionChains(driver).move_to_element(driver.find_element(By.TAG_NAME, "h1")).perform()
        print(f"tooltip after leaving: {tooltip.is_displayed()}")
        driver.find_element(By.CSS_SELECTOR, f"svg.chart circle[data-id='{container}'][data-date='{date}']").click()
        anchor = driver.execute_script("return location.hash")
        print(f"hash: {anchor}")
        section = driver.find_elements(By.CSS_SELECTOR, f"section{anchor} h2")
        print(f"section: {section[0].text.split(' ')[0] if section else 'none'}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
