"""The charts page's release timeline: every release of every project on one line chart, with a legend to filter
the projects and zoom and pan on the time axis. Pure: figures in, text out.

The chart is Chart.js 2.9's own line chart (the theme's ``vendor/chart.js``) with its own legend switched on (a click
on a project hides or shows its line) and the official zoom plugin for Chart.js 2, npm ``chartjs-plugin-zoom``
0.7.7 (MIT; its peer dependency is chart.js ^2.6.0) with the ``hammerjs`` 2.0.8 (MIT) it pans with, both served
from the dashboard's ``vendor/`` folder. The plugin registers itself for every chart when it loads; the timeline's
script takes it back and gives it to the timeline alone, before the theme's own charts are made, so they stay as
they were. As in the plugin's own sample (``samples/zoom-time.html``), a drag zooms into the period it crosses and
a switch turns the drag into a pan; a button resets the zoom. Points are small and hovered one at a time
(Chart.js's ``nearest`` mode, ``intersect``): on the whole span of 2007 to 2024 (about 50 pixels a year) a
project's releases days apart share a pixel, and are told apart by zooming in and panning; a release of another
project of the same day can be drawn over one, and is moved out of the way by hiding its project in the legend.
The canvas has a fixed size and its value axis a fixed width (the theme's charts follow their card's width), so
that a point is at the same place in a browser that draws a scrollbar and in one that does not, whatever the
font's exact metrics; the chart is drawn once the theme's font has loaded. The tooltip is Chart.js's external
("custom") tooltip, styled as the theme styles its canvas tooltips, so what it says is in the page, not only in
pixels; like Chart.js's own, it lists every release at the nearest distance (releases of one day with as many
changes coincide).
"""

from __future__ import annotations

import json
import math

from capreplay.benchmark.apps.sbadmin_figures import Point
from capreplay.benchmark.apps.sbadmin_pages import COLOURS, HEX, replace_once

HAMMER = "hammerjs@2.0.8"
ZOOM = "chartjs-plugin-zoom@0.7.7"
VENDOR = {"hammerjs": (HAMMER, ""), "chartjs-plugin-zoom": (ZOOM, "dist")}
"""``vendor/NAME`` -> the npm package and its folder served there."""
SCRIPTS = ("vendor/hammerjs/hammer.min.js", "vendor/chartjs-plugin-zoom/chartjs-plugin-zoom.min.js",
           "js/demo/pallets-releases.js", "js/demo/chart-releases-demo.js")  # fmt: skip
"""What the charts page loads for the timeline, in order, right after Chart.js."""
CANVAS = "myReleaseChart"
WIDTH, HEIGHT = 940, 320
"""The timeline's size in CSS pixels, fixed: a point is at the same place of the canvas whether the browser draws a
scrollbar (BrowserGym's does) or not, so a gold path's points hit the same releases in every browser."""

CARD = f"""
                    <!-- Content Row -->
                    <div class="row">

                        <div class="col-12">

                            <!-- Line Chart -->
                            <div class="card shadow mb-4">
                                <div
                                    class="card-header py-3 d-flex flex-row align-items-center justify-content-between">
                                    <h6 class="m-0 font-weight-bold text-primary">Line Chart: Every Release over Time
                                        (changes per release)</h6>
                                    <div class="btn-group btn-group-sm" role="group"
                                        aria-label="What a drag on the chart does">
                                        <button type="button" class="btn btn-primary" id="releaseZoomMode"
                                            aria-pressed="true">Drag to zoom</button>
                                        <button type="button" class="btn btn-outline-primary" id="releasePanMode"
                                            aria-pressed="false">Drag to pan</button>
                                        <button type="button" class="btn btn-outline-secondary"
                                            id="releaseResetZoom">Reset zoom</button>
                                    </div>
                                </div>
                                <div class="card-body">
                                    <div class="chart-area" style="position: relative;">
                                        <canvas id="{CANVAS}" width="{WIDTH}" height="{HEIGHT}"></canvas>
                                    </div>
                                    <hr>
                                    Every release of the six projects, by date, with the number of changes it
                                    lists. Click a project in the legend to hide or show its releases; drag
                                    across the chart to zoom into a period, switch to <em>Drag to pan</em> to
                                    move along the years, and hover a point to see its release. Styling for the
                                    line chart can be found in the <code>/js/demo/chart-releases-demo.js</code>
                                    file.
                                </div>
                            </div>

                        </div>
                    </div>
"""

CHART_SCRIPT = r"""// Every Pallets release on one line chart: the legend filters the projects, a drag zooms or pans.
// The zoom plugin registers itself for every chart; it is taken back here, before the theme's charts are made, and
// given to this chart alone.
Chart.plugins.unregister(ChartZoom);

var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// A year with its fraction as the axis shows it: the year, or the month it falls in.
function yearLabel(value) {
  var year = Math.floor(value + 1e-9);
  var month = Math.floor((value - year) * 12 + 1e-9);
  return month <= 0 ? String(year) : MONTHS[Math.min(month, 11)] + " " + year;
}

// The tooltip as HTML over the canvas, styled as the theme styles its canvas tooltips.
function releaseTooltip(tooltipModel) {
  var canvas = this._chart.canvas;
  var tip = document.getElementById("releaseTooltip");
  if (!tip) {
    tip = document.createElement("div");
    tip.id = "releaseTooltip";
    tip.setAttribute("role", "tooltip");
    tip.style.cssText = "position: absolute; pointer-events: none; background: #fff; border: 1px solid #dddfeb;"
      + " border-radius: .35rem; padding: 10px 15px; color: #858796; font-size: .8rem; white-space: nowrap;"
      + " box-shadow: 0 .15rem 1.75rem 0 rgba(58,59,69,.15); z-index: 10; opacity: 0;";
    canvas.parentNode.appendChild(tip);
  }
  if (tooltipModel.opacity === 0 || !tooltipModel.dataPoints || !tooltipModel.dataPoints.length) {
    tip.style.opacity = 0;
    tip.innerHTML = "";
    return;
  }
  // every release at the nearest distance, as Chart.js's own tooltip lists them: points of one day can coincide
  var chart = this._chart;
  tip.innerHTML = tooltipModel.dataPoints.map(function(item, n) {
    var dataset = chart.data.datasets[item.datasetIndex];
    var release = dataset.data[item.index];
    var title = dataset.label + " " + release.v;
    return '<div data-release="' + title + '"' + (n ? ' class="mt-2"' : "") + '>'
      + '<div class="font-weight-bold" style="color: #6e707e; font-size: .9rem;">' + title + "</div>"
      + "<div>Released " + release.d + "</div><div>" + release.y + (release.y === 1 ? " change" : " changes")
      + "</div></div>";
  }).join("");
  tip.style.opacity = 1;
  var left = tooltipModel.caretX + 12;
  if (left + tip.offsetWidth > canvas.offsetWidth) {
    left = tooltipModel.caretX - 12 - tip.offsetWidth;
  }
  tip.style.left = left + "px";
  tip.style.top = Math.max(0, tooltipModel.caretY - tip.offsetHeight / 2) + "px";
}

function releaseChartConfig() {
  return {
    type: 'line',
    plugins: [ChartZoom],
    data: {
      datasets: PALLETS_RELEASES.projects.map(function(project) {
        return {
          label: project.label,
          data: project.data,
          fill: false,
          lineTension: 0,
          borderWidth: 1,
          borderColor: project.color,
          backgroundColor: project.color,
          pointRadius: 2.5,
          pointHoverRadius: 4,
          pointHitRadius: 1,
          pointBorderWidth: 1,
          pointBackgroundColor: project.color,
          pointBorderColor: project.color
        };
      })
    },
    options: {
      responsive: false,
      animation: {
        duration: 0
      },
      layout: {
        padding: {
          left: 10,
          right: 25,
          top: 10,
          bottom: 0
        }
      },
      scales: {
        xAxes: [{
          type: 'linear',
          position: 'bottom',
          ticks: {
            min: PALLETS_RELEASES.first,
            max: PALLETS_RELEASES.last,
            maxTicksLimit: 8,
            maxRotation: 0,
            callback: yearLabel
          },
          gridLines: {
            display: false,
            drawBorder: false
          }
        }],
        yAxes: [{
          // a fixed width, so that the time axis starts at the same pixel whatever the font's exact metrics
          afterFit: function(scale) {
            scale.width = 60;
          },
          scaleLabel: {
            display: true,
            labelString: "Changes"
          },
          ticks: {
            min: 0,
            maxTicksLimit: 5,
            padding: 10
          },
          gridLines: {
            color: "rgb(234, 236, 244)",
            zeroLineColor: "rgb(234, 236, 244)",
            drawBorder: false,
            borderDash: [2],
            zeroLineBorderDash: [2]
          }
        }]
      },
      legend: {
        display: true,
        position: 'top',
        labels: {
          usePointStyle: true,
          padding: 20
        }
      },
      hover: {
        mode: 'nearest',
        intersect: true
      },
      tooltips: {
        enabled: false,
        mode: 'nearest',
        intersect: true,
        custom: releaseTooltip
      },
      plugins: {
        zoom: {
          pan: {
            enabled: false,
            mode: 'x',
            rangeMin: {x: PALLETS_RELEASES.first},
            rangeMax: {x: PALLETS_RELEASES.last}
          },
          zoom: {
            enabled: true,
            drag: {
              animationDuration: 0
            },
            mode: 'x',
            rangeMin: {x: PALLETS_RELEASES.first},
            rangeMax: {x: PALLETS_RELEASES.last}
          }
        }
      }
    }
  };
}

// The chart is drawn once the theme's font has loaded, so that its legend is measured in the font it is drawn in
// (the theme's own chart scripts, which run meanwhile, set Chart.js's font to Nunito).
var releaseChart = null;
document.fonts.load("400 12px Nunito").then(function() {
  releaseChart = new Chart(document.getElementById("myReleaseChart"), releaseChartConfig());
});

// What a drag does, switched as in the plugin's own sample: zoom into the period it crosses, or pan along the years.
function dragMode(zoom) {
  if (!releaseChart) {
    return;
  }
  var options = releaseChart.options.plugins.zoom;
  options.zoom.drag = zoom ? {animationDuration: 0} : false;
  options.zoom.enabled = zoom;
  options.pan.enabled = !zoom;
  releaseChart.update();
  var zoomButton = document.getElementById("releaseZoomMode");
  var panButton = document.getElementById("releasePanMode");
  zoomButton.className = "btn " + (zoom ? "btn-primary" : "btn-outline-primary");
  panButton.className = "btn " + (zoom ? "btn-outline-primary" : "btn-primary");
  zoomButton.setAttribute("aria-pressed", String(zoom));
  panButton.setAttribute("aria-pressed", String(!zoom));
}

document.getElementById("releaseZoomMode").addEventListener("click", function() { dragMode(true); });
document.getElementById("releasePanMode").addEventListener("click", function() { dragMode(false); });
document.getElementById("releaseResetZoom").addEventListener("click", function() {
  if (releaseChart) {
    releaseChart.resetZoom();
  }
});
"""


def timeline_card(html: str) -> str:
    """``charts.html`` with the timeline's card in a row of its own under the theme's charts, and its scripts
    loaded right after Chart.js, before the theme's chart scripts."""
    html = replace_once(html, r"(\n\s*</div>\n)(\s*</div>\s*<!-- /\.container-fluid -->)",
                        lambda m: m[1] + CARD + m[2], literal=False)  # fmt: skip
    chart = '<script src="vendor/chart.js/Chart.min.js"></script>'
    scripts = "".join(f'\n    <script src="{src}"></script>' for src in SCRIPTS)
    return replace_once(html, chart, chart + scripts)


def timeline_script(timeline: list[tuple[str, list[Point]]]) -> str:
    """``js/demo/pallets-releases.js``: every release of each project, oldest first, as one global,
    ``PALLETS_RELEASES``: its date as a year with its fraction (``x``), its changes (``y``), version (``v``) and
    date (``d``), and the years the axis spans (the first release's year to the year after the last one)."""
    xs = [p.x for _, points in timeline for p in points]
    projects = [
        {"label": name, "color": HEX[colour],
         "data": [{"x": p.x, "y": p.changes, "v": p.version, "d": p.released.isoformat()} for p in points]}
        for (name, points), colour in zip(timeline, COLOURS, strict=False)
    ]  # fmt: skip
    first, last = (math.floor(min(xs)), math.ceil(max(xs))) if xs else (0, 1)
    lines = ",\n".join(f"    {json.dumps(p, ensure_ascii=False)}" for p in projects)
    return ("// Every release of the Pallets projects, counted from their CHANGES.rst when the dashboard was built.\n"
            f"var PALLETS_RELEASES = {{\n  \"first\": {first},\n  \"last\": {last},\n"
            f"  \"projects\": [\n{lines}\n  ]\n}};\n")  # fmt: skip
