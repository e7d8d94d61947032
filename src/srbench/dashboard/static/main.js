// sr-bench Dashboard — the hash router. After a navigation the page's heading takes the focus, so
// keyboard and screen-reader users start at the top of the new page.
// Every value is put into the page as text, never as HTML.
"use strict";

async function render() {
  const { parts, q } = route();
  const page = parts[0] || "runs";
  document.querySelectorAll("[data-nav]").forEach((a) => {
    const on = a.dataset.nav === page || (a.dataset.nav === "runs" && page === "run") || (a.dataset.nav === "datasets" && page === "dataset") ||
      (a.dataset.nav === "experiments" && page === "experiment");
    a.classList.toggle("active", on);
    if (on) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  });
  try {
    if (page === "run" && parts[1]) runView(parts[1], q);
    else if (page === "compare") await compareView(q);
    else if (page === "diagnose") await diagnoseView(q);
    else if (page === "create") await createView(q);
    else if (page === "datasets") await datasetsView(q);
    else if (page === "dataset" && parts[1]) await datasetView(parts[1], q);
    else if (page === "experiments") await experimentsView(q);
    else if (page === "experiment" && parts[1]) await experimentView(parts[1], q);
    else runsView(q);
  } catch (e) {
    show(h("h1", {}, "Something went wrong"), h("p", { class: "error", role: "alert" }, e.message),
      h("button", { type: "button", on: { click: render } }, "retry"));
  }
}

function focusHeading() {
  const tryFocus = (n) => {
    const h1 = document.querySelector("#view h1");
    if (h1) { h1.tabIndex = -1; h1.focus({ preventScroll: false }); } else if (n > 0) setTimeout(() => tryFocus(n - 1), 100);
  };
  tryFocus(30);
}

window.addEventListener("hashchange", () => { render(); focusHeading(); });
render();
