// Injected at the end of an evaluation's report.html by test_eval_report_layout.sh and run
// by headless Chromium: opens every folded block, then writes what the layout came out as
// into the element pre#layout at the end of the page, one fact per line:
//   TABLE i WIDTH CONTAINER SCROLL PAGE  a table's width, its container's width and scroll
//                                        width, and the page's content width (px)
//   MIN i WIDTH                          the table's narrowest layout (min-content), for the log
//   SPLIT i "word" WIDTH CONTAINER       a word of a cell laid out on more than one line
//                                        although it is narrower than half its table's container
//   ORDER nonpass pass figure            document positions (-1: none) of the first
//                                        non-PASS row, the first PASS row and the first figure
//   FIRST top                            the first non-PASS row's distance from the page top (px)
//   LINK "#id"                           a same-page link whose target is missing
//   ROW metric href                      a row of the table of checks not passed: its metric
//                                        and the figure its check links to ("-": none)
(function () {
  var out = [];
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  var canvas = document.createElement('canvas').getContext('2d');
  var body = document.body, bs = getComputedStyle(body);
  var page = body.clientWidth - parseFloat(bs.paddingLeft) - parseFloat(bs.paddingRight);
  function natural(word, el) { canvas.font = getComputedStyle(el).font; return canvas.measureText(word).width; }
  document.querySelectorAll('table').forEach(function (t, i) {
    var box = t.parentElement;
    out.push('TABLE ' + i + ' ' + t.getBoundingClientRect().width.toFixed(1) + ' ' + box.clientWidth + ' ' +
             box.scrollWidth + ' ' + page.toFixed(1));
    t.style.width = 'min-content';
    out.push('MIN ' + i + ' ' + t.getBoundingClientRect().width.toFixed(1));
    t.style.width = '';
    t.querySelectorAll('td,th').forEach(function (cell) {
      var walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (var n = walker.nextNode(); n; n = walker.nextNode()) {
        var re = /\S+/g, m;
        while ((m = re.exec(n.data))) {
          var r = document.createRange();
          r.setStart(n, m.index);
          r.setEnd(n, m.index + m[0].length);
          var lines = {};
          Array.prototype.forEach.call(r.getClientRects(), function (q) {
            if (q.width > 0) lines[Math.round(q.top)] = 1;
          });
          var w = natural(m[0], n.parentElement);
          if (Object.keys(lines).length > 1 && w <= box.clientWidth / 2)
            out.push('SPLIT ' + i + ' ' + JSON.stringify(m[0]) + ' ' + w.toFixed(1) + ' ' + box.clientWidth);
        }
      }
    });
  });
  var nonpass = -1, pass = -1, figure = -1, first = -1;
  document.querySelectorAll('td > .badge, figure').forEach(function (el, k) {
    if (el.tagName === 'FIGURE') { if (figure < 0) figure = k; return; }
    if (el.classList.contains('pass')) { if (pass < 0) pass = k; return; }
    if (/fail|insufficient|unavailable/.test(el.className) && nonpass < 0) {
      nonpass = k;
      first = el.getBoundingClientRect().top + window.scrollY;
    }
  });
  out.push('ORDER ' + nonpass + ' ' + pass + ' ' + figure);
  out.push('FIRST ' + Math.round(first));
  document.querySelectorAll('a[href^="#"]').forEach(function (a) {
    if (!document.getElementById(a.getAttribute('href').slice(1))) out.push('LINK ' + JSON.stringify(a.getAttribute('href')));
  });
  document.querySelectorAll('table').forEach(function (t) {
    if (!t.caption || t.caption.textContent.indexOf('Checks not passed') !== 0) return;
    Array.prototype.forEach.call(t.tBodies[0].rows, function (tr) {
      var a = tr.querySelector('a[href^="#"]');
      out.push('ROW ' + tr.cells[0].textContent + ' ' + (a ? a.getAttribute('href') : '-'));
    });
  });
  var p = document.createElement('pre');
  p.id = 'layout';
  p.textContent = out.join('\n');
  body.appendChild(p);
})();
