// hlodiff HTML report: keyboard navigation, filters, search, graph nodes.
// Everything shown comes from the page itself (escaped when it was written):
// this script only hides, shows and copies nodes, it never builds HTML from text.
(function () {
  "use strict";
  var causes = Array.prototype.slice.call(document.querySelectorAll(".cause"));
  var kind = document.getElementById("filter-kind");
  var stage = document.getElementById("filter-stage");
  var search = document.getElementById("search");
  var counter = document.getElementById("shown");
  var current = null;

  function shown() {
    return causes.filter(function (c) { return !c.hidden; });
  }

  function select(cause) {
    if (current) current.classList.remove("current");
    current = cause;
    cause.classList.add("current");
    cause.scrollIntoView({block: "start"});
    cause.focus({preventScroll: true});
  }

  function step(delta) {
    var list = shown();
    if (!list.length) return;
    var at = list.indexOf(current);
    if (at < 0) at = delta > 0 ? 0 : list.length - 1;
    else at = Math.max(0, Math.min(list.length - 1, at + delta));
    select(list[at]);
  }

  function filter() {
    var k = kind ? kind.value : "", s = stage ? stage.value : "";
    var q = search ? search.value.trim().toLowerCase() : "";
    var n = 0;
    causes.forEach(function (c) {
      var ok = (!k || c.dataset.kind === k) && (!s || c.dataset.stage === s) &&
        (!q || c.dataset.ops.toLowerCase().indexOf(q) >= 0);
      c.hidden = !ok;
      if (ok) n += 1;
    });
    if (counter) counter.textContent = n + " of " + causes.length;
  }

  [kind, stage].forEach(function (el) { if (el) el.addEventListener("change", filter); });
  if (search) search.addEventListener("input", filter);

  document.addEventListener("keydown", function (e) {
    var target = e.target;
    if (target.matches && target.matches("input, select, textarea")) {
      if (e.key === "Escape") target.blur();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "j") step(1);
    else if (e.key === "k") step(-1);
    else if (e.key === "/" && search) { e.preventDefault(); search.focus(); }
    else if ((e.key === "Enter" || e.key === " ") && target.classList &&
             target.classList.contains("node")) { e.preventDefault(); show(target); }
  });

  function show(node) {
    var graph = node.closest(".graph");
    var panel = graph.querySelector(".node-panel");
    var template = document.getElementById(node.dataset.detail);
    graph.querySelectorAll(".node.selected, .node.partnered").forEach(function (n) {
      n.classList.remove("selected", "partnered");
    });
    node.classList.add("selected");
    var partner = node.dataset.partner;
    if (partner !== undefined) {
      var other = node.dataset.run === "a" ? "b" : "a";
      graph.querySelectorAll('.node[data-run="' + other + '"]').forEach(function (n) {
        if (n.dataset.name === partner) n.classList.add("partnered");
      });
    }
    panel.replaceChildren(template.content.cloneNode(true));
  }

  document.addEventListener("click", function (e) {
    var node = e.target.closest && e.target.closest(".node");
    if (node) show(node);
    var cause = e.target.closest && e.target.closest(".cause");
    if (cause && cause !== current) {
      if (current) current.classList.remove("current");
      current = cause;
      cause.classList.add("current");
    }
  });

  filter();
})();
