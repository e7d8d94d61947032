// sr-bench Dashboard — the hash router.
// Every value is put into the page as text, never as HTML.
"use strict";

// -- router ----------------------------------------------------------------------------------------
async function render() {
  const { parts, q } = route();
  const page = parts[0] || "runs";
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", a.dataset.nav === page ||
    (a.dataset.nav === "runs" && page === "run") || (a.dataset.nav === "datasets" && page === "dataset")));
  try {
    if (page === "run" && parts[1]) runView(parts[1], q);
    else if (page === "compare") await compareView(q);
    else if (page === "create") await createView(q);
    else if (page === "datasets") await datasetsView(q);
    else if (page === "dataset" && parts[1]) await datasetView(parts[1], q);
    else runsView(q);
  } catch (e) {
    show(h("p", { class: "error" }, e.message), h("button", { on: { click: render } }, "retry"));
  }
}

window.addEventListener("hashchange", render);
render();
