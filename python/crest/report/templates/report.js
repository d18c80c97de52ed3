(function () {
  "use strict";
  // Enhancements only: the charts are complete SVG without this script. It adds a
  // read-out of every configuration at the load under the pointer, legend buttons
  // that hide or show a configuration in every chart, and opens the details for
  // printing. Text from the report is only ever set with textContent.
  var body = document.body;
  var charts = Array.prototype.slice.call(document.querySelectorAll("svg.chart"));
  var hidden = {};

  function seriesOf(root, index) {
    return root.querySelectorAll('.series[data-series="' + index + '"]');
  }

  function setHidden(index, off) {
    hidden[index] = off;
    charts.forEach(function (svg) {
      Array.prototype.forEach.call(seriesOf(svg, index), function (g) { g.classList.toggle("off", off); });
    });
    Array.prototype.forEach.call(document.querySelectorAll('.legend button[data-series="' + index + '"]'), function (b) {
      b.classList.toggle("off", off);
      b.setAttribute("aria-pressed", off ? "false" : "true");
    });
  }

  function highlight(index) {
    charts.forEach(function (svg) {
      Array.prototype.forEach.call(svg.querySelectorAll(".series"), function (g) {
        g.classList.toggle("dim", index !== null && g.getAttribute("data-series") !== String(index));
      });
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll(".legend button[data-series]"), function (button) {
    var index = button.getAttribute("data-series");
    button.addEventListener("click", function () { setHidden(index, !hidden[index]); });
    button.addEventListener("mouseenter", function () { highlight(index); });
    button.addEventListener("mouseleave", function () { highlight(null); });
    button.addEventListener("focus", function () { highlight(index); });
    button.addEventListener("blur", function () { highlight(null); });
  });

  // The read-out: the marks nearest the pointer's x, one line per visible configuration.
  var tip = document.createElement("div");
  tip.className = "tip";
  tip.style.display = "none";
  body.appendChild(tip);

  function svgX(svg, event) {
    var point = svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    var matrix = svg.getScreenCTM();
    return matrix ? point.matrixTransform(matrix.inverse()).x : 0;
  }

  function markX(mark) {
    var box = mark.getBBox();
    return box.x + box.width / 2;
  }

  function prepare(svg) {
    if (!svg.querySelector(".series .mark[data-x]") || svg.classList.contains("strip")) { return; }
    var guide = document.createElementNS(svg.namespaceURI, "line");
    guide.setAttribute("class", "guide");
    guide.style.display = "none";
    svg.appendChild(guide);
    var viewBox = svg.viewBox.baseVal;
    svg.addEventListener("mousemove", function (event) {
      var x = svgX(svg, event);
      var best = null;
      var bestDistance = Infinity;
      Array.prototype.forEach.call(svg.querySelectorAll(".series:not(.off) .mark[data-x]"), function (mark) {
        var d = Math.abs(markX(mark) - x);
        if (d < bestDistance) { bestDistance = d; best = mark; }
      });
      if (!best || bestDistance > 40) { hide(); return; }
      var at = best.getAttribute("data-x");
      var gx = markX(best);
      guide.setAttribute("x1", gx);
      guide.setAttribute("x2", gx);
      guide.setAttribute("y1", 10);
      guide.setAttribute("y2", viewBox.height - 46);
      guide.style.display = "";
      while (tip.firstChild) { tip.removeChild(tip.firstChild); }
      var head = document.createElement("b");
      head.textContent = at;
      tip.appendChild(head);
      Array.prototype.forEach.call(svg.querySelectorAll(".series:not(.off)"), function (g) {
        var mark = null;
        Array.prototype.forEach.call(g.querySelectorAll(".mark[data-x]"), function (m) {
          if (m.getAttribute("data-x") === at) { mark = m; }
        });
        if (!mark) { return; }
        var line = document.createElement("div");
        var dot = document.createElement("i");
        dot.style.background = mark.getAttribute("fill") || mark.getAttribute("stroke") || "#888";
        line.appendChild(dot);
        line.appendChild(document.createTextNode(g.getAttribute("data-label") + ": " + mark.getAttribute("data-v")));
        tip.appendChild(line);
      });
      tip.style.display = "block";
      var figure = svg.closest("figure");
      var rect = figure.getBoundingClientRect();
      var left = event.clientX - rect.left + 14;
      if (left + tip.offsetWidth > rect.width) { left = event.clientX - rect.left - tip.offsetWidth - 14; }
      tip.style.left = (rect.left + window.scrollX + Math.max(0, left)) + "px";
      tip.style.top = (rect.top + window.scrollY + Math.max(0, event.clientY - rect.top - tip.offsetHeight - 10)) + "px";
    });
    function hide() {
      guide.style.display = "none";
      tip.style.display = "none";
    }
    svg.addEventListener("mouseleave", hide);
  }

  var ready = 0;
  charts.forEach(function (svg) {
    try {
      prepare(svg);
      ready += 1;
    } catch (error) {
      if (window.crestRecordError) { window.crestRecordError("chart " + svg.id + ": " + error); }
    }
  });

  // Printing shows everything: every configuration, every detail section.
  var closed = [];
  window.addEventListener("beforeprint", function () {
    Object.keys(hidden).forEach(function (index) { if (hidden[index]) { setHidden(index, false); } });
    Array.prototype.forEach.call(document.querySelectorAll("details:not([open])"), function (d) {
      closed.push(d);
      d.open = true;
    });
  });
  window.addEventListener("afterprint", function () {
    closed.forEach(function (d) { d.open = false; });
    closed = [];
  });

  body.setAttribute("data-charts-ready", String(ready));
})();
