// troco hosted checkout: progressive enhancement only. Without this script every form posts and
// every page renders on the server.
(function () {
  "use strict";
  // Brand prefixes of BR-STANDARDS.md (Elo first: its ranges overlap Visa and Mastercard).
  var elo = [[401178,401179],[431274,431274],[438935,438935],[451416,451416],[457393,457393],[457631,457632],[504175,504175],[506699,506778],[509000,509999],[627780,627780],[636297,636297],[636368,636368],[650031,650033],[650035,650051],[650405,650439],[650485,650538],[650541,650598],[650700,650718],[650720,650727],[650901,650978],[651652,651679],[655000,655019],[655021,655058]];
  var names = { visa: "Visa", mastercard: "Mastercard", amex: "Amex", elo: "Elo", hipercard: "Hipercard", diners: "Diners" };
  function brand(d) {
    if (d.length >= 6) {
      var p6 = parseInt(d.slice(0, 6), 10);
      for (var i = 0; i < elo.length; i++) { if (p6 >= elo[i][0] && p6 <= elo[i][1]) return "elo"; }
      if (d.slice(0, 6) === "606282") return "hipercard";
    }
    var p2 = parseInt(d.slice(0, 2), 10), p3 = parseInt(d.slice(0, 3), 10), p4 = parseInt(d.slice(0, 4), 10);
    if (p2 === 34 || p2 === 37) return "amex";
    if ((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39) return "diners";
    if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return "mastercard";
    if (d.charAt(0) === "4") return "visa";
    return "";
  }
  function digits(s) { return s.replace(/\D+/g, ""); }

  var number = document.querySelector("[data-card-number]");
  var badge = document.querySelector("[data-brand-badge]");
  if (number && badge) {
    number.addEventListener("input", function () {
      var d = digits(number.value).slice(0, 19);
      var b = d.length >= 1 ? brand(d) : "";
      badge.textContent = b ? names[b] : "";
      var groups = b === "amex" ? [4, 6, 5] : [4, 4, 4, 4, 3];
      var out = [], i = 0;
      for (var g = 0; g < groups.length && i < d.length; g++) { out.push(d.slice(i, i + groups[g])); i += groups[g]; }
      var formatted = out.join(" ");
      if (formatted !== number.value) number.value = formatted;
    });
  }
  var exp = document.querySelector("[data-card-exp]");
  if (exp) {
    exp.addEventListener("input", function (e) {
      if (e.inputType && e.inputType.indexOf("delete") === 0) return;
      var d = digits(exp.value).slice(0, 4);
      exp.value = d.length > 2 ? d.slice(0, 2) + "/" + d.slice(2) : d;
    });
  }

  // One submission per click: disable the button and say so (the server also ignores a repeat).
  var form = document.querySelector("[data-pay-form]");
  if (form) {
    form.addEventListener("submit", function () {
      var btn = form.querySelector(".pay-button");
      if (!btn) return;
      if (btn.dataset.sent) { return; }
      btn.dataset.sent = "1";
      setTimeout(function () { btn.disabled = true; btn.textContent = btn.dataset.processing || btn.textContent; }, 0);
    });
  }

  // Copy buttons (hidden without JS: the code text is selectable).
  document.querySelectorAll("[data-copy]").forEach(function (btn) {
    btn.hidden = false;
    btn.addEventListener("click", function () {
      var el = document.getElementById(btn.getAttribute("data-copy"));
      var text = btn.getAttribute("data-copy-value") || (el ? el.textContent.trim() : "");
      var done = function () { var old = btn.textContent; btn.textContent = btn.getAttribute("data-copied"); setTimeout(function () { btn.textContent = old; }, 2000); };
      if (navigator.clipboard && navigator.clipboard.writeText) { navigator.clipboard.writeText(text).then(done, function () {}); }
      else if (el) { var r = document.createRange(); r.selectNodeContents(el); var s = window.getSelection(); s.removeAllRanges(); s.addRange(r); try { document.execCommand("copy"); done(); } catch (e) {} }
    });
  });
  document.querySelectorAll("[data-print]").forEach(function (btn) {
    btn.hidden = false;
    btn.addEventListener("click", function () { window.print(); });
  });

  // PIX countdown.
  document.querySelectorAll("[data-countdown]").forEach(function (el) {
    var end = Date.parse(el.getAttribute("data-countdown"));
    var skew = 0;
    if (!isFinite(end)) return;
    function tick() {
      var left = Math.max(0, Math.round((end - Date.now() - skew) / 1000));
      var h = Math.floor(left / 3600), m = Math.floor(left % 3600 / 60), s = left % 60;
      var mm = (m < 10 ? "0" : "") + m, ss = (s < 10 ? "0" : "") + s;
      el.textContent = h > 0 ? h + ":" + mm + ":" + ss : mm + ":" + ss;
      if (left > 0) setTimeout(tick, 1000);
    }
    tick();
  });

  // While a payment waits, poll its state and reload when it changes (paid, expired…).
  var waiting = document.querySelector("[data-status-url]");
  if (waiting && window.fetch) {
    var url = waiting.getAttribute("data-status-url"), state = waiting.getAttribute("data-state");
    var poll = function () {
      fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (j) { if (j && j.state && j.state !== state) { window.location.reload(); } else { setTimeout(poll, 3000); } })
        .catch(function () { setTimeout(poll, 5000); });
    };
    setTimeout(poll, 3000);
  }

  // Move focus to an error summary so screen readers announce it.
  var err = document.getElementById("form-error");
  if (err) { err.focus(); }
})();
