// The script of profile.html, inlined into the page's <script> by html.rs (include_str!), so
// the page stays one self-contained file that opens from disk with no network. It reads the
// JSON blob in <script id="profile-data">, draws the zoomable per-tile timeline and the
// all-tile SRAM strip on canvases, and reports the outcome for headless checks: on success
// <body data-rendered="ok">, and each canvas counts what its last draw put on it
// (data-phase-runs and data-kernel-spans on the timeline, data-columns on the SRAM strip); any
// exception goes into <pre id="errors"> and data-rendered="error: …". Plain ES2017, no
// modules or imports. It must never contain a closing script tag or an HTML comment opener.
"use strict";
(function () {
  const errorsBox = document.getElementById("errors");
  function reportError(text) {
    errorsBox.textContent += text + "\n";
    document.body.dataset.rendered = "error: " + String(text).split("\n")[0];
  }
  window.onerror = function (message, source, line, column, error) {
    reportError(error && error.stack ? String(error.stack) : message + " at " + source + ":" + line + ":" + column);
  };
  window.addEventListener("unhandledrejection", function (event) {
    reportError("unhandled rejection: " + event.reason);
  });

  const KERNEL_COLOURS = ["#8fc3e8", "#9fd89a", "#f7b6a0", "#f3d98b", "#c7b3e5", "#a7dcd6",
    "#f5b3c9", "#d5c2a5", "#b9d27c", "#f0a35e", "#9ab0f0", "#d6d6d6"];
  const IDLE = 4;

  const formatInt = (n) => Math.round(n).toLocaleString("en-US");
  function formatBytes(bytes) {
    if (bytes < 1024) return bytes + " B";
    const units = ["KiB", "MiB", "GiB", "TiB"];
    let value = bytes / 1024, unit = 0;
    while (value >= 1024 && unit + 1 < units.length) { value /= 1024; unit++; }
    return value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2) + " " + units[unit];
  }
  const escapeHtml = (text) => String(text).replace(/[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const clamp = (value, low, high) => Math.min(Math.max(value, low), high);

  // Index of the first span whose end is after `cycle` (spans of one track never overlap, so
  // their ends are sorted like their starts).
  function firstEndAfter(ends, cycle) {
    let low = 0, high = ends.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (ends[mid] <= cycle) low = mid + 1; else high = mid;
    }
    return low;
  }

  // The span nearest to `cycle` within `tolerance` cycles (one containing it wins), or -1.
  function findSpan(starts, ends, cycle, tolerance) {
    let best = -1, bestDistance = Infinity;
    for (let i = firstEndAfter(ends, cycle - tolerance); i < starts.length && starts[i] <= cycle + tolerance; i++) {
      const distance = cycle < starts[i] ? starts[i] - cycle : cycle >= ends[i] ? cycle - ends[i] : 0;
      if (distance < bestDistance) { best = i; bestDistance = distance; }
    }
    return best;
  }

  // Decodes the blob once into typed arrays per tile; kernels are decoded on first use,
  // since only the (at most ~32) tiles shown in detail ever need them.
  function buildModel(data) {
    const tileCount = data.tiles;
    const phases = new Array(tileCount);
    let lastEnd = 0;
    for (let tile = 0; tile < tileCount; tile++) {
      const flat = data.phases[tile] || [];
      const count = Math.floor(flat.length / 3);
      const starts = new Float64Array(count), ends = new Float64Array(count), kinds = new Uint8Array(count);
      let cursor = 0;
      for (let i = 0; i < count; i++) {
        kinds[i] = Math.min(flat[3 * i], 3);
        starts[i] = cursor + flat[3 * i + 1];
        ends[i] = starts[i] + flat[3 * i + 2];
        cursor = ends[i];
      }
      if (count) lastEnd = Math.max(lastEnd, ends[count - 1]);
      phases[tile] = { starts, ends, kinds };
    }
    const kernelCache = new Map();
    function kernelsOf(tile) {
      let lanes = kernelCache.get(tile);
      if (lanes) return lanes;
      const flat = data.kernels[tile] || [];
      const count = Math.floor(flat.length / 4);
      const perWorker = new Array(data.workers).fill(0);
      for (let i = 0; i < count; i++) perWorker[flat[4 * i]]++;
      lanes = perWorker.map((n) => ({ starts: new Float64Array(n), ends: new Float64Array(n), names: new Uint32Array(n), length: 0 }));
      let start = 0;
      for (let i = 0; i < count; i++) {
        const lane = lanes[flat[4 * i]];
        start += flat[4 * i + 2];
        lane.starts[lane.length] = start;
        lane.ends[lane.length] = start + flat[4 * i + 3];
        lane.names[lane.length] = flat[4 * i + 1];
        lane.length++;
      }
      kernelCache.set(tile, lanes);
      return lanes;
    }
    return {
      data, tileCount, phases, kernelsOf,
      workers: data.workers,
      endCycle: Math.max(1, data.total_cycles, lastEnd),
      colours: data.phase_colours,
      kinds: data.phase_kinds,
      micros: (cycles) => (cycles / Math.max(1, data.clock_hz) * 1e6).toFixed(3) + " µs",
    };
  }

  function niceStep(rough) {
    const power = Math.pow(10, Math.floor(Math.log10(Math.max(rough, 1e-9))));
    for (const m of [1, 2, 5, 10]) if (m * power >= rough) return m * power;
    return 10 * power;
  }
  function tickLabel(value, step) {
    const scaled = (unit, suffix) => {
      const decimals = step / unit >= 1 ? 0 : Math.ceil(-Math.log10(step / unit) - 1e-9);
      return (value / unit).toFixed(decimals) + suffix;
    };
    if (value === 0) return "0";
    if (step >= 1e6) return scaled(1e6, "M");
    if (step >= 1e3) return scaled(1e3, "k");
    return formatInt(value);
  }

  function createTimeline(model) {
    const canvas = document.getElementById("timeline-canvas");
    const wrap = document.getElementById("timeline-wrap");
    const tooltip = document.getElementById("timeline-tooltip");
    const readout = document.getElementById("view-readout");
    const tileFrom = document.getElementById("tile-from");
    const tileTo = document.getElementById("tile-to");
    const ctx = canvas.getContext("2d");
    const GUTTER = 78, AXIS = 26, PAD_RIGHT = 12, PAD_BOTTOM = 4;
    const DETAIL_TILES = 32;
    const data = model.data;
    const view = { t0: 0, t1: model.endCycle, r0: 0, rows: Math.max(1, model.tileCount) };
    let cssWidth = 0, cssHeight = 0;
    let accumulator = new Float32Array(0);
    let kindsRow = new Uint8Array(0);
    const textWidths = new Map();
    // What the current draw put on the canvas, published on it for headless checks.
    let phaseRuns = 0, kernelSpans = 0;

    function plotArea() {
      return { x: GUTTER, y: AXIS, w: Math.max(16, Math.floor(cssWidth - GUTTER - PAD_RIGHT)), h: Math.max(16, cssHeight - AXIS - PAD_BOTTOM) };
    }
    function resize() {
      const ratio = window.devicePixelRatio || 1;
      cssWidth = wrap.clientWidth;
      cssHeight = canvas.clientHeight;
      const width = Math.round(cssWidth * ratio), height = Math.round(cssHeight * ratio);
      if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    }
    function clampView() {
      const full = model.endCycle;
      const width = clamp(view.t1 - view.t0, Math.min(8, full), full);
      view.t0 = clamp(view.t0, 0, full - width);
      view.t1 = view.t0 + width;
      view.rows = clamp(view.rows, 1, Math.max(1, model.tileCount));
      view.r0 = clamp(view.r0, 0, Math.max(0, model.tileCount - view.rows));
    }
    const isDetail = () => view.rows <= DETAIL_TILES + 1e-9 && model.tileCount > 0;
    // Inside one tile's row in detail mode: the phase band, then one lane per worker.
    function detailLayout(rowHeight) {
      const gap = rowHeight >= 14 ? 3 : 1;
      const usable = rowHeight - gap;
      if (!model.workers) return { phaseHeight: usable, laneHeight: 0, gap };
      const phaseHeight = clamp(usable * 0.3, 3, 26);
      return { phaseHeight, laneHeight: (usable - phaseHeight - 1) / model.workers, gap };
    }

    // For pixel columns 0..width, the phase kind covering most of the time of tiles
    // [fromTile, toTile), or IDLE when under 30% is covered. Cost is one pass over the visible
    // spans plus their widths in pixels, whatever the zoom.
    function rasterize(fromTile, toTile, width, scale) {
      const cells = width * 4;
      if (accumulator.length < cells) accumulator = new Float32Array(cells); else accumulator.fill(0, 0, cells);
      if (kindsRow.length < width) kindsRow = new Uint8Array(width);
      const t0 = view.t0, t1 = view.t1;
      for (let tile = fromTile; tile < toTile; tile++) {
        const track = model.phases[tile];
        const { starts, ends, kinds } = track;
        for (let i = firstEndAfter(ends, t0); i < starts.length; i++) {
          if (starts[i] >= t1) break;
          let x0 = (starts[i] - t0) * scale, x1 = (ends[i] - t0) * scale;
          if (x0 < 0) x0 = 0;
          if (x1 > width) x1 = width;
          if (x1 <= x0) continue;
          const kind = kinds[i], a = x0 | 0, b = x1 | 0;
          if (a === b) { accumulator[a * 4 + kind] += x1 - x0; continue; }
          accumulator[a * 4 + kind] += a + 1 - x0;
          for (let x = a + 1; x < b; x++) accumulator[x * 4 + kind] += 1;
          if (b < width) accumulator[b * 4 + kind] += x1 - b;
        }
      }
      const threshold = 0.3 * (toTile - fromTile);
      for (let x = 0; x < width; x++) {
        let best = IDLE, bestWeight = 0, sum = 0;
        for (let kind = 0; kind < 4; kind++) {
          const weight = accumulator[x * 4 + kind];
          sum += weight;
          if (weight > bestWeight) { bestWeight = weight; best = kind; }
        }
        kindsRow[x] = sum >= threshold ? best : IDLE;
      }
      return kindsRow;
    }
    function emitRuns(paths, kinds, width, x0, y, height) {
      for (let x = 0; x < width;) {
        const kind = kinds[x];
        let end = x + 1;
        while (end < width && kinds[end] === kind) end++;
        if (kind !== IDLE) { paths[kind].rect(x0 + x, y, end - x, height); phaseRuns++; }
        x = end;
      }
    }
    function fillPaths(paths, colours) {
      paths.forEach((path, index) => { ctx.fillStyle = colours[index % colours.length]; ctx.fill(path); });
    }

    // Many tiles: one raster line per tile, or per pixel row when tiles are thinner than 3 px.
    function drawDense(plot, rowHeight, scale) {
      const paths = [new Path2D(), new Path2D(), new Path2D(), new Path2D()];
      const width = plot.w;
      if (rowHeight >= 3) {
        const gap = rowHeight >= 7 ? 1 : 0;
        const first = Math.floor(view.r0), last = Math.min(model.tileCount, Math.ceil(view.r0 + view.rows));
        for (let tile = first; tile < last; tile++) {
          const y0 = Math.round(plot.y + (tile - view.r0) * rowHeight);
          const y1 = Math.round(plot.y + (tile + 1 - view.r0) * rowHeight) - gap;
          if (y1 <= y0) continue;
          emitRuns(paths, rasterize(tile, tile + 1, width, scale), width, plot.x, y0, y1 - y0);
        }
      } else {
        let previousFrom = -1, previousTo = -1, kinds = null;
        for (let line = 0; line < Math.ceil(plot.h); line++) {
          const from = Math.floor(view.r0 + line / rowHeight);
          if (from >= model.tileCount) break;
          const to = Math.min(model.tileCount, Math.max(from + 1, Math.floor(view.r0 + (line + 1) / rowHeight)));
          if (from !== previousFrom || to !== previousTo) {
            kinds = rasterize(from, to, width, scale);
            previousFrom = from; previousTo = to;
          }
          emitRuns(paths, kinds, width, plot.x, plot.y + line, 1);
        }
      }
      fillPaths(paths, model.colours);
    }

    function textWidth(text, font) {
      const key = font + "|" + text;
      let width = textWidths.get(key);
      if (width === undefined) { ctx.font = font; width = ctx.measureText(text).width; textWidths.set(key, width); }
      return width;
    }

    // Few tiles: each tile gets its phase band and one lane per worker with kernel spans.
    function drawDetail(plot, rowHeight, scale) {
      const layout = detailLayout(rowHeight);
      const width = plot.w;
      const phasePaths = [new Path2D(), new Path2D(), new Path2D(), new Path2D()];
      const kernelPaths = KERNEL_COLOURS.map(() => new Path2D());
      const lanePath = new Path2D();
      const labels = [];
      const names = data.kernel_names;
      const first = Math.floor(view.r0), last = Math.min(model.tileCount, Math.ceil(view.r0 + view.rows));
      for (let tile = first; tile < last; tile++) {
        const top = plot.y + (tile - view.r0) * rowHeight;
        const phaseTop = Math.round(top), phaseBottom = Math.round(top + layout.phaseHeight);
        emitRuns(phasePaths, rasterize(tile, tile + 1, width, scale), width, plot.x, phaseTop, Math.max(1, phaseBottom - phaseTop));
        if (!model.workers) continue;
        const lanes = model.kernelsOf(tile);
        for (let worker = 0; worker < model.workers; worker++) {
          const y = top + layout.phaseHeight + 1 + worker * layout.laneHeight;
          const height = Math.max(1, layout.laneHeight - (layout.laneHeight >= 6 ? 1 : 0));
          lanePath.rect(plot.x, y, width, height);
          const lane = lanes[worker];
          let lastPixel = -1;
          for (let i = firstEndAfter(lane.ends, view.t0); i < lane.length; i++) {
            if (lane.starts[i] >= view.t1) break;
            let x0 = Math.max(0, (lane.starts[i] - view.t0) * scale);
            let x1 = Math.min(width, (lane.ends[i] - view.t0) * scale);
            if (x1 - x0 < 1) {
              // Sub-pixel spans: draw one pixel per column, not one per span.
              if (Math.floor(x0) === lastPixel) continue;
              x0 = Math.floor(x0); x1 = x0 + 1;
            }
            lastPixel = Math.floor(x1 - 1e-6);
            const name = lane.names[i];
            kernelPaths[name % KERNEL_COLOURS.length].rect(plot.x + x0, y, x1 - x0, height);
            kernelSpans++;
            if (height >= 9 && x1 - x0 >= 28) labels.push([plot.x + x0, y, x1 - x0, height, name]);
          }
        }
      }
      fillPaths(phasePaths, model.colours);
      ctx.fillStyle = "#eef1f4";
      ctx.fill(lanePath);
      fillPaths(kernelPaths, KERNEL_COLOURS);
      ctx.fillStyle = "#1f2933";
      ctx.textBaseline = "middle";
      ctx.textAlign = "left";
      for (const [x, y, w, h, nameIndex] of labels) {
        const font = Math.min(12, Math.floor(h - 2)) + "px system-ui, sans-serif";
        let text = names[nameIndex];
        const full = textWidth(text, font);
        if (full + 8 > w) {
          const keep = Math.floor(text.length * (w - 14) / full);
          if (keep < 3) continue;
          text = text.slice(0, keep) + "…";
        }
        ctx.font = font;
        ctx.fillText(text, x + 4, y + h / 2 + 0.5);
      }
    }

    function drawMarker(plot, scale, cycle, label) {
      if (cycle <= view.t0 || cycle >= view.t1) return;
      const x = Math.round(plot.x + (cycle - view.t0) * scale) + 0.5;
      ctx.save();
      ctx.strokeStyle = "rgba(31, 41, 51, 0.75)";
      ctx.setLineDash([5, 4]);
      ctx.beginPath(); ctx.moveTo(x, plot.y); ctx.lineTo(x, plot.y + plot.h); ctx.stroke();
      ctx.setLineDash([]);
      ctx.font = "11px system-ui, sans-serif";
      const width = ctx.measureText(label).width + 8;
      const left = x + 4 + width > plot.x + plot.w ? x - 4 - width : x + 4;
      ctx.fillStyle = "rgba(255, 255, 255, 0.9)";
      ctx.fillRect(left, plot.y + 4, width, 16);
      ctx.fillStyle = "#1f2933";
      ctx.textBaseline = "middle"; ctx.textAlign = "left";
      ctx.fillText(label, left + 4, plot.y + 12);
      ctx.restore();
    }

    function drawAxis(plot, scale) {
      const step = niceStep((view.t1 - view.t0) / Math.max(2, plot.w / 110));
      ctx.font = "11px system-ui, sans-serif";
      ctx.textBaseline = "alphabetic"; ctx.textAlign = "center";
      ctx.fillStyle = "#4a5561";
      const grid = new Path2D(), ticks = new Path2D();
      for (let cycle = Math.ceil(view.t0 / step) * step; cycle <= view.t1; cycle += step) {
        const x = Math.round(plot.x + (cycle - view.t0) * scale) + 0.5;
        ticks.moveTo(x, plot.y - 5); ticks.lineTo(x, plot.y);
        grid.moveTo(x, plot.y); grid.lineTo(x, plot.y + plot.h);
        ctx.fillText(tickLabel(cycle, step), x, plot.y - 8);
      }
      ctx.strokeStyle = "#9aa5b1"; ctx.stroke(ticks);
      ctx.strokeStyle = "rgba(31, 41, 51, 0.08)"; ctx.stroke(grid);
      ctx.textAlign = "left"; ctx.fillStyle = "#65717e";
      ctx.fillText("cycle", 8, plot.y - 8);
      ctx.strokeStyle = "#c4cad2";
      ctx.strokeRect(plot.x - 0.5, plot.y - 0.5, plot.w + 1, plot.h + 1);
    }

    // Label every 1, 2, 5, 10, 20, … tiles, whichever keeps labels 15 px apart.
    const tileStep = (rowHeight) => Math.max(1, niceStep(15 / rowHeight));
    function drawGutter(plot, rowHeight, detail) {
      ctx.save();
      ctx.beginPath(); ctx.rect(0, plot.y, plot.x - 2, plot.h); ctx.clip();
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      const first = Math.floor(view.r0), last = Math.min(model.tileCount, Math.ceil(view.r0 + view.rows));
      if (detail) {
        const layout = detailLayout(rowHeight);
        for (let tile = first; tile < last; tile++) {
          const top = plot.y + (tile - view.r0) * rowHeight;
          ctx.font = "600 12px system-ui, sans-serif"; ctx.fillStyle = "#1f2933";
          ctx.fillText("tile " + tile, plot.x - 8, top + Math.max(layout.phaseHeight / 2, 6));
          if (layout.laneHeight >= 8) {
            ctx.font = Math.min(11, Math.floor(layout.laneHeight)) + "px system-ui, sans-serif"; ctx.fillStyle = "#65717e";
            for (let worker = 0; worker < model.workers; worker++)
              ctx.fillText("w" + worker, plot.x - 8, top + layout.phaseHeight + 1 + (worker + 0.5) * layout.laneHeight);
          }
        }
      } else if (rowHeight >= 13) {
        ctx.font = "12px system-ui, sans-serif"; ctx.fillStyle = "#1f2933";
        for (let tile = first; tile < last; tile++)
          ctx.fillText("tile " + tile, plot.x - 8, plot.y + (tile - view.r0 + 0.5) * rowHeight);
      } else {
        const step = tileStep(rowHeight);
        ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "#4a5561";
        ctx.strokeStyle = "#9aa5b1";
        for (let tile = Math.ceil(view.r0 / step) * step; tile < view.r0 + view.rows; tile += step) {
          const y = Math.round(plot.y + (tile - view.r0 + 0.5) * rowHeight) + 0.5;
          ctx.beginPath(); ctx.moveTo(plot.x - 5, y); ctx.lineTo(plot.x, y); ctx.stroke();
          ctx.fillText(String(tile), plot.x - 8, y);
        }
      }
      ctx.restore();
      ctx.save();
      ctx.translate(12, plot.y + plot.h / 2); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "center"; ctx.textBaseline = "middle";
      ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "#65717e";
      ctx.fillText("tile", 0, 0);
      ctx.restore();
    }

    function updateControls(detail) {
      const firstTile = Math.floor(view.r0), lastTile = Math.min(model.tileCount, Math.ceil(view.r0 + view.rows)) - 1;
      if (document.activeElement !== tileFrom && document.activeElement !== tileTo) {
        tileFrom.value = firstTile; tileTo.value = lastTile;
      }
      writeHash(firstTile, lastTile);
      readout.textContent = "cycles " + formatInt(view.t0) + " – " + formatInt(view.t1) +
        " (" + model.micros(view.t0) + " – " + model.micros(view.t1) + ") · tiles " + firstTile + "–" + lastTile +
        " (" + (lastTile - firstTile + 1) + " shown) · " +
        (detail ? (model.workers ? "worker kernels shown" : "no kernel spans recorded") : "zoom to ≤ " + DETAIL_TILES + " tiles to see worker kernels");
    }

    // The view lives in the URL fragment (#tiles=A-B&cycles=C-D), so a view can be reloaded,
    // shared, or opened directly by a headless browser.
    function readHash() {
      const params = new URLSearchParams(location.hash.slice(1));
      const tiles = /^(\d+)-(\d+)$/.exec(params.get("tiles") || "");
      if (tiles) {
        const a = Number(tiles[1]), b = Number(tiles[2]);
        view.r0 = Math.min(a, b); view.rows = Math.abs(b - a) + 1;
      }
      const cycles = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(params.get("cycles") || "");
      if (cycles && Number(cycles[2]) > Number(cycles[1])) { view.t0 = Number(cycles[1]); view.t1 = Number(cycles[2]); }
    }
    function writeHash(firstTile, lastTile) {
      const full = view.t0 <= 0 && view.t1 >= model.endCycle && view.rows >= model.tileCount;
      const hash = full ? "" : "#tiles=" + firstTile + "-" + lastTile + "&cycles=" + Math.floor(view.t0) + "-" + Math.ceil(view.t1);
      if (hash === location.hash) return;
      try { history.replaceState(null, "", hash || location.pathname + location.search); } catch (error) { /* a sandboxed page may not rewrite its URL */ }
    }

    function draw() {
      resize();
      clampView();
      const plot = plotArea();
      ctx.clearRect(0, 0, cssWidth, cssHeight);
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(plot.x, plot.y, plot.w, plot.h);
      if (model.tileCount === 0) {
        ctx.fillStyle = "#65717e"; ctx.font = "14px system-ui, sans-serif";
        ctx.fillText("This profile has no tiles.", plot.x + 12, plot.y + 24);
        readout.textContent = "";
        canvas.dataset.phaseRuns = "0"; canvas.dataset.kernelSpans = "0";
        return;
      }
      const rowHeight = plot.h / view.rows;
      const scale = plot.w / (view.t1 - view.t0);
      const detail = isDetail();
      phaseRuns = 0; kernelSpans = 0;
      ctx.save();
      ctx.beginPath(); ctx.rect(plot.x, plot.y, plot.w, plot.h); ctx.clip();
      if (detail) drawDetail(plot, rowHeight, scale); else drawDense(plot, rowHeight, scale);
      if (data.startup_cycles > 0) drawMarker(plot, scale, data.startup_cycles, "start-up ends");
      if (data.cropped_cycles > 0) drawMarker(plot, scale, data.startup_cycles + data.cropped_cycles, "cropped window ends");
      ctx.restore();
      drawAxis(plot, scale);
      drawGutter(plot, rowHeight, detail);
      updateControls(detail);
      canvas.dataset.phaseRuns = String(phaseRuns);
      canvas.dataset.kernelSpans = String(kernelSpans);
    }
    let drawPending = false;
    function requestDraw() {
      if (drawPending) return;
      drawPending = true;
      const run = () => { if (drawPending) { drawPending = false; draw(); } };
      requestAnimationFrame(run);
      // Hidden and headless pages may hold animation frames back; draw anyway.
      setTimeout(run, 100);
    }

    function hitTest(mouseX, mouseY) {
      const plot = plotArea();
      if (mouseX < plot.x || mouseX >= plot.x + plot.w || mouseY < plot.y || mouseY >= plot.y + plot.h) return null;
      const rowHeight = plot.h / view.rows;
      const tileF = view.r0 + (mouseY - plot.y) / rowHeight;
      const tile = Math.floor(tileF);
      if (tile < 0 || tile >= model.tileCount) return null;
      const scale = plot.w / (view.t1 - view.t0);
      const cycle = view.t0 + (mouseX - plot.x) / scale;
      const tolerance = 2 / scale;
      if (isDetail() && model.workers) {
        const layout = detailLayout(rowHeight);
        const local = (tileF - tile) * rowHeight - layout.phaseHeight - 1;
        if (local >= 0) {
          const worker = Math.floor(local / layout.laneHeight);
          // Below the last lane is the gap before the next tile: report the phase instead.
          if (worker < model.workers) {
            const lane = model.kernelsOf(tile)[worker];
            const i = findSpan(lane.starts, lane.ends, cycle, tolerance);
            if (i < 0) return { tile, cycle, worker, kind: "idle" };
            return { tile, cycle, worker, kind: "kernel", name: data.kernel_names[lane.names[i]], start: lane.starts[i], end: lane.ends[i] };
          }
        }
      }
      const track = model.phases[tile];
      const i = findSpan(track.starts, track.ends, cycle, tolerance);
      if (i < 0) return { tile, cycle, kind: "idle" };
      return { tile, cycle, kind: "phase", phase: model.kinds[track.kinds[i]], start: track.starts[i], end: track.ends[i] };
    }
    function tileFacts(tile) {
      const facts = [];
      if (data.bytes_sent[tile] || data.bytes_received[tile])
        facts.push("exchange: " + formatBytes(data.bytes_sent[tile]) + " sent, " + formatBytes(data.bytes_received[tile]) + " received");
      if (data.memory_capacity[tile])
        facts.push("SRAM: " + formatBytes(data.memory_used[tile]) + " used of " + formatBytes(data.memory_capacity[tile]));
      return facts.length ? "\n" + facts.join("\n") : "";
    }
    function describe(hit) {
      const span = (start, end) => "\ncycles " + formatInt(start) + " – " + formatInt(end) +
        "\n" + formatInt(end - start) + " cycles · " + model.micros(end - start);
      if (hit.kind === "phase") return "<b>tile " + hit.tile + " · " + hit.phase + "</b>" + span(hit.start, hit.end) + tileFacts(hit.tile);
      if (hit.kind === "kernel") return "<b>tile " + hit.tile + " · worker " + hit.worker + "</b>\nkernel " + escapeHtml(hit.name) + span(hit.start, hit.end);
      const who = hit.worker === undefined ? "" : " · worker " + hit.worker;
      return "<b>tile " + hit.tile + who + "</b>\nidle at cycle " + formatInt(hit.cycle) + tileFacts(hit.tile);
    }
    function placeTooltip(box, container, x, y) {
      const width = box.offsetWidth, height = box.offsetHeight;
      const left = x + 16 + width > container.clientWidth ? x - 16 - width : x + 16;
      const top = y + 16 + height > container.clientHeight ? y - 12 - height : y + 16;
      box.style.left = Math.max(0, left) + "px";
      box.style.top = Math.max(0, top) + "px";
    }

    let drag = null;
    function mousePosition(event) {
      const rect = canvas.getBoundingClientRect();
      return [event.clientX - rect.left, event.clientY - rect.top];
    }
    canvas.addEventListener("mousedown", (event) => {
      if (event.button !== 0) return;
      drag = { x: event.clientX, y: event.clientY, t0: view.t0, t1: view.t1, r0: view.r0 };
      canvas.classList.add("dragging");
      tooltip.hidden = true;
      event.preventDefault();
    });
    window.addEventListener("mousemove", (event) => {
      if (!drag) return;
      const plot = plotArea();
      const width = drag.t1 - drag.t0;
      view.t0 = drag.t0 - (event.clientX - drag.x) * width / plot.w;
      view.t1 = view.t0 + width;
      view.r0 = drag.r0 - (event.clientY - drag.y) * view.rows / plot.h;
      requestDraw();
    });
    window.addEventListener("mouseup", () => { drag = null; canvas.classList.remove("dragging"); });
    canvas.addEventListener("mousemove", (event) => {
      if (drag) return;
      const [x, y] = mousePosition(event);
      const hit = hitTest(x, y);
      if (!hit) { tooltip.hidden = true; return; }
      tooltip.innerHTML = describe(hit);
      tooltip.hidden = false;
      placeTooltip(tooltip, wrap, x, y);
    });
    canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });
    canvas.addEventListener("wheel", (event) => {
      event.preventDefault();
      const plot = plotArea();
      const [x, y] = mousePosition(event);
      const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? plot.h : 1;
      const dx = event.deltaX * unit, dy = event.deltaY * unit;
      if (event.shiftKey || event.altKey || x < plot.x) {
        // Some browsers turn Shift+wheel into horizontal scrolling; take whichever moved.
        const factor = Math.exp((dy || dx) * 0.0015);
        const fraction = clamp((y - plot.y) / plot.h, 0, 1);
        const at = view.r0 + fraction * view.rows;
        view.rows = clamp(view.rows * factor, 1, model.tileCount);
        view.r0 = at - fraction * view.rows;
      } else if (Math.abs(dx) > Math.abs(dy)) {
        const shift = dx * (view.t1 - view.t0) / plot.w;
        view.t0 += shift; view.t1 += shift;
      } else {
        const factor = Math.exp(dy * 0.0015);
        const fraction = clamp((x - plot.x) / plot.w, 0, 1);
        const at = view.t0 + fraction * (view.t1 - view.t0);
        const width = (view.t1 - view.t0) * factor;
        view.t0 = at - fraction * width;
        view.t1 = view.t0 + width;
      }
      tooltip.hidden = true;
      requestDraw();
    }, { passive: false });
    canvas.addEventListener("dblclick", (event) => {
      const plot = plotArea();
      const [, y] = mousePosition(event);
      const tile = Math.floor(view.r0 + (y - plot.y) / (plot.h / view.rows));
      focusTile(tile, view.rows > 8 ? 8 : 1);
    });

    function focusTile(tile, count) {
      view.rows = clamp(count || 8, 1, model.tileCount);
      // A whole first tile, so the range reads "8 shown", not a sliver of a ninth.
      view.r0 = Math.floor(tile - (view.rows - 1) / 2);
      requestDraw();
    }
    function reset() {
      view.t0 = 0; view.t1 = model.endCycle; view.r0 = 0; view.rows = Math.max(1, model.tileCount);
      requestDraw();
    }
    function applyTileRange() {
      const from = Number(tileFrom.value), to = Number(tileTo.value);
      if (!Number.isFinite(from) || !Number.isFinite(to)) return;
      const low = clamp(Math.min(from, to), 0, model.tileCount - 1), high = clamp(Math.max(from, to), 0, model.tileCount - 1);
      view.r0 = low; view.rows = high - low + 1;
      tileFrom.blur(); tileTo.blur();
      requestDraw();
    }
    document.getElementById("reset-view").addEventListener("click", reset);
    document.getElementById("tile-apply").addEventListener("click", applyTileRange);
    for (const input of [tileFrom, tileTo])
      input.addEventListener("keydown", (event) => { if (event.key === "Enter") applyTileRange(); });
    const cropButton = document.getElementById("crop-view");
    if (data.cropped_cycles > 0) {
      cropButton.addEventListener("click", () => {
        view.t0 = data.startup_cycles; view.t1 = data.startup_cycles + data.cropped_cycles;
        requestDraw();
      });
    } else {
      cropButton.disabled = true;
    }
    window.addEventListener("resize", requestDraw);
    window.addEventListener("hashchange", () => { readHash(); requestDraw(); });
    // When loading the image dominates (a real model's weights over the host link), open on the
    // run itself; "Reset" shows everything.
    if (!location.hash && data.cropped_cycles > 0 && data.startup_cycles > data.cropped_cycles) {
      view.t0 = data.startup_cycles; view.t1 = data.startup_cycles + data.cropped_cycles;
    }
    readHash();
    draw();
    return { focusTile };
  }

  // Every tile's SRAM use on one strip: per pixel column, the fullest of the tiles it covers.
  function createMemoryStrip(model, timeline) {
    const canvas = document.getElementById("memory-strip");
    const wrap = document.getElementById("memory-strip-wrap");
    const tooltip = document.getElementById("memory-tooltip");
    const ctx = canvas.getContext("2d");
    const data = model.data;
    const PAD_LEFT = 78, PAD_RIGHT = 12, TOP = 8, BOTTOM = 18;
    const fraction = (tile) => data.memory_capacity[tile] ? data.memory_used[tile] / data.memory_capacity[tile] : 0;
    function geometry() {
      return { x: PAD_LEFT, y: TOP, w: Math.max(16, wrap.clientWidth - PAD_LEFT - PAD_RIGHT), h: canvas.clientHeight - TOP - BOTTOM };
    }
    function draw() {
      const ratio = window.devicePixelRatio || 1;
      canvas.width = Math.round(wrap.clientWidth * ratio);
      canvas.height = Math.round(canvas.clientHeight * ratio);
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      const g = geometry();
      ctx.clearRect(0, 0, wrap.clientWidth, canvas.clientHeight);
      ctx.fillStyle = "#ffffff"; ctx.fillRect(g.x, g.y, g.w, g.h);
      const count = model.tileCount;
      if (!count) { canvas.dataset.columns = "0"; return; }
      const normal = new Path2D(), full = new Path2D();
      const columns = Math.min(Math.floor(g.w), count);
      const columnWidth = g.w / columns;
      let drawn = 0;
      for (let column = 0; column < columns; column++) {
        const from = Math.floor(column * count / columns), to = Math.max(from + 1, Math.floor((column + 1) * count / columns));
        let most = 0;
        for (let tile = from; tile < to; tile++) most = Math.max(most, fraction(tile));
        if (most <= 0) continue;
        const height = Math.max(1, most * g.h);
        (most > 0.9 ? full : normal).rect(g.x + column * columnWidth, g.y + g.h - height, Math.max(1, columnWidth - (columnWidth >= 4 ? 1 : 0)), height);
        drawn++;
      }
      ctx.fillStyle = "#4c78a8"; ctx.fill(normal);
      ctx.fillStyle = "#e45756"; ctx.fill(full);
      ctx.strokeStyle = "#c4cad2"; ctx.strokeRect(g.x - 0.5, g.y - 0.5, g.w + 1, g.h + 1);
      ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "#4a5561";
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      ctx.fillText("100%", g.x - 6, g.y + 4);
      ctx.fillText("0%", g.x - 6, g.y + g.h - 2);
      ctx.textBaseline = "top";
      ctx.textAlign = "left"; ctx.fillText("tile 0", g.x, g.y + g.h + 3);
      ctx.textAlign = "right"; ctx.fillText("tile " + (count - 1), g.x + g.w, g.y + g.h + 3);
      canvas.dataset.columns = String(drawn);
    }
    function tileAt(x) {
      const g = geometry();
      if (x < g.x || x >= g.x + g.w) return -1;
      return clamp(Math.floor((x - g.x) / g.w * model.tileCount), 0, model.tileCount - 1);
    }
    canvas.addEventListener("mousemove", (event) => {
      const rect = canvas.getBoundingClientRect();
      const x = event.clientX - rect.left, y = event.clientY - rect.top;
      const tile = tileAt(x);
      if (tile < 0) { tooltip.hidden = true; return; }
      const used = data.memory_used[tile], capacity = data.memory_capacity[tile];
      tooltip.innerHTML = "<b>tile " + tile + "</b>\n" + formatBytes(used) + " used of " + formatBytes(capacity) +
        " (" + (capacity ? (100 * used / capacity).toFixed(1) : "0.0") + "%)\n" + formatBytes(capacity - used) + " free";
      tooltip.hidden = false;
      const width = tooltip.offsetWidth;
      tooltip.style.left = (x + 16 + width > wrap.clientWidth ? x - 16 - width : x + 16) + "px";
      tooltip.style.top = "4px";
    });
    canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });
    canvas.addEventListener("click", (event) => {
      const tile = tileAt(event.clientX - canvas.getBoundingClientRect().left);
      if (tile < 0) return;
      timeline.focusTile(tile, 8);
      document.getElementById("timeline").scrollIntoView({ behavior: "smooth" });
    });
    window.addEventListener("resize", draw);
    draw();
  }

  function main() {
    const data = JSON.parse(document.getElementById("profile-data").textContent);
    const model = buildModel(data);
    const timeline = createTimeline(model);
    createMemoryStrip(model, timeline);
    for (const element of document.querySelectorAll("[data-tile]")) {
      element.addEventListener("click", () => {
        timeline.focusTile(Number(element.dataset.tile), 8);
        document.getElementById("timeline").scrollIntoView({ behavior: "smooth" });
      });
    }
  }

  try {
    const started = performance.now();
    main();
    document.body.dataset.renderMs = String(Math.round(performance.now() - started));
    if (!errorsBox.textContent) document.body.dataset.rendered = "ok";
  } catch (error) {
    reportError(error && error.stack ? String(error.stack) : String(error));
  }
})();
