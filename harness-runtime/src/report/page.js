(function () {
  'use strict';
  var LANES = ['provisioning', 'turn', 'model', 'tools', 'asks', 'gates', 'wire', 'product', 'teardown'];
  var data = JSON.parse(document.getElementById('run-data').textContent);

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') { node.textContent = attrs[k]; } else { node.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) { if (c) { node.appendChild(c); } });
    return node;
  }
  function ms(v) { return v >= 1000 ? (v / 1000).toFixed(2) + ' s' : Math.round(v) + ' ms'; }

  var c = data.counts;
  var summary = document.getElementById('summary');
  [['total', c.total], ['failed', c.failed], ['passed', c.passed], ['skipped', c.skipped], ['ignored', c.ignored]]
    .forEach(function (p) {
      summary.appendChild(el('span', { id: 'count-' + p[0], 'class': 'outcome-' + p[0], text: p[1] + ' ' + p[0] }));
    });
  summary.appendChild(el('span', { 'class': 'run', text: 'run ' + data.run_id }));
  var avoided = data.scenarios.reduce(function (sum, s) { return sum + ((s.usage && s.usage.avoided_cost) || 0); }, 0);
  if (avoided > 0) {
    summary.appendChild(el('span', { 'class': 'avoided', text: 'replays avoided cost ' + String(Number(avoided.toFixed(6))) }));
  }

  function timeline(s) {
    var end = s.duration_ms;
    s.entries.forEach(function (e) { end = Math.max(end, e.at_ms); });
    end = Math.max(end, 1);
    var pct = function (t) { return (100 * t / end).toFixed(3) + '%'; };
    var box = el('div', { 'class': 'timeline' });
    var axis = el('div', { 'class': 'axis' }, [el('div', { 'class': 'axis-label', text: 'time' })]);
    var axisTrack = el('div', { 'class': 'track' });
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      var tick = el('span', { 'class': 'tick', text: ms(f * end) });
      tick.style.left = pct(f * end);
      axisTrack.appendChild(tick);
    });
    axis.appendChild(axisTrack);
    box.appendChild(axis);
    LANES.forEach(function (lane) {
      var entries = s.entries.filter(function (e) { return e.lane === lane; });
      var track = el('div', { 'class': 'track' });
      var spans = {};
      entries.forEach(function (e) {
        if (e.key) {
          var sp = spans[e.key] || (spans[e.key] = { from: e.at_ms, to: e.at_ms, label: [] });
          sp.to = Math.max(sp.to, e.at_ms);
          sp.label.push(e.kind);
        }
      });
      Object.keys(spans).forEach(function (key) {
        var sp = spans[key];
        var bar = el('div', { 'class': 'span', title: key + ': ' + sp.label.join(' → ') });
        bar.style.left = pct(sp.from);
        bar.style.width = pct(Math.max(sp.to - sp.from, end / 400));
        track.appendChild(bar);
      });
      entries.forEach(function (e) {
        var miss = /miss/.test(e.kind) || /miss/.test(e.text);
        var mark = el('div', { 'class': 'mark' + (miss ? ' miss' : ''), title: ms(e.at_ms) + ' ' + e.kind + (e.text ? ': ' + e.text : '') });
        mark.style.left = pct(e.at_ms);
        track.appendChild(mark);
      });
      box.appendChild(el('div', { 'class': 'lane lane-' + lane, 'data-lane': lane }, [
        el('div', { 'class': 'lane-label', text: lane + ' (' + entries.length + ')' }), track
      ]));
    });
    return box;
  }

  function entryTable(s) {
    var table = el('table', { 'class': 'entries' });
    s.entries.forEach(function (e) {
      table.appendChild(el('tr', { 'class': 'entry lane-' + e.lane }, [
        el('td', { 'class': 't', text: ms(e.at_ms) }),
        el('td', { 'class': 'l', text: e.lane }),
        el('td', { 'class': 'k', text: e.kind + (e.count > 1 ? ' ×' + e.count : '') }),
        el('td', { 'class': 'x', text: e.text || '' })
      ]));
    });
    return table;
  }

  // A line diff (longest common subsequence): small inputs, a snapshot each.
  function diff(a, b) {
    var x = a.split('\n'), y = b.split('\n');
    var n = x.length, m = y.length, i, j;
    if (n * m > 4000000) { return [['del', a], ['add', b]]; }
    var dp = [];
    for (i = 0; i <= n; i++) { dp.push(new Array(m + 1).fill(0)); }
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        dp[i][j] = x[i] === y[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
      }
    }
    var out = [];
    i = 0; j = 0;
    while (i < n && j < m) {
      if (x[i] === y[j]) { out.push(['same', x[i]]); i++; j++; }
      else if (dp[i + 1][j] >= dp[i][j + 1]) { out.push(['del', x[i++]]); }
      else { out.push(['add', y[j++]]); }
    }
    while (i < n) { out.push(['del', x[i++]]); }
    while (j < m) { out.push(['add', y[j++]]); }
    return out;
  }

  function section(title, node) {
    return el('div', { 'class': 'section' }, [el('h3', { text: title }), node]);
  }

  function plural(n, one, many) { return n + ' ' + (n === 1 ? one : many); }

  // What a scenario's turns spent: the totals, the slowest first token, the cost a replay
  // avoided, and a row per turn. Replayed times are the recording's.
  function usageCost(v) { return String(Number(v.toFixed(6))); }
  function usage(u) {
    var box = el('div', { 'class': 'usage' });
    var line = (u.input + u.output + u.reasoning) + ' tokens (input ' + u.input + ', output ' + u.output +
      ', reasoning ' + u.reasoning + (u.cache_read ? ', cache read ' + u.cache_read : '') +
      (u.cache_write ? ', cache write ' + u.cache_write : '') + '), cost ' + usageCost(u.cost);
    if (u.slowest_first_token) {
      line += '; slowest first token ' + ms(u.slowest_first_token[1]) + ' (request ' + u.slowest_first_token[0] +
        ' of ' + u.requests + ')';
    }
    if (u.clock === 'recorded') { line += '; times as recorded'; }
    box.appendChild(el('p', { 'class': 'usage-summary', text: line }));
    if (u.avoided_cost !== undefined && u.avoided_cost !== null) {
      box.appendChild(el('p', { 'class': 'usage-avoided', text: 'replayed: avoided cost ' + usageCost(u.avoided_cost) }));
    }
    if (u.turns.length) {
      var table = el('table', { 'class': 'usage-turns' }, [el('tr', {}, ['turn', 'input', 'output', 'reasoning', 'cost', 'steps', 'time']
        .map(function (h) { return el('th', { text: h }); }))]);
      u.turns.forEach(function (t, i) {
        table.appendChild(el('tr', {}, [String(i + 1), String(t.input), String(t.output), String(t.reasoning), usageCost(t.cost),
          String(t.steps), t.duration_ms === undefined || t.duration_ms === null ? '' : ms(t.duration_ms)]
          .map(function (v) { return el('td', { text: v }); })));
      });
      box.appendChild(table);
    }
    return box;
  }

  // The search in one line: how many schedules ran, whether the space was exhausted, and the
  // failing schedule with how it was found, shrunk and reproduced.
  function explorationSummary(x) {
    var how = x.mode === 'random' ? 'random search' + (x.seed != null ? ', seed ' + x.seed : '')
      : x.mode === 'exhaustive' ? 'exhaustive search' : x.mode;
    var line;
    if (x.mode === 'replay') {
      line = 'replayed schedule ' + (x.schedule || 'fifo') + ': ' +
        (x.diverged ? 'the run no longer fits it (below: where it diverged)' : x.failed ? 'it failed' : 'it passed');
    } else if (x.failed) {
      line = 'failed under schedule ' + (x.schedule || 'fifo') + ', found at schedule ' + x.schedules +
        (x.budget_runs ? ' of at most ' + x.budget_runs : '') + ' (' + how + ')';
      if (x.found && x.found !== x.schedule) {
        line += ', shrunk from ' + x.found + ' in ' + plural(x.shrink_runs, 'run', 'runs');
      } else if (x.shrink_runs > 0) {
        line += ', nothing simpler failed in ' + plural(x.shrink_runs, 'shrinking run', 'shrinking runs');
      }
      if (x.reproduced) { line += ', reproduced ' + x.reproduced[0] + ' of ' + x.reproduced[1]; }
    } else if (x.exhausted && x.space === 1) {
      line = 'explored 1 schedule: the only ordering there is (no two steps were ever held at once)';
    } else if (x.exhausted) {
      line = 'explored ' + plural(x.schedules, 'schedule', 'schedules') + ': all ' +
        (x.space != null ? x.space : x.schedules) + ' orderings tried';
    } else if (x.runs < x.budget_runs) {
      line = 'explored ' + x.schedules + ' of at most ' + x.budget_runs + ' schedules (' + how +
        '): the time ran out before the space was exhausted';
    } else {
      line = 'explored ' + plural(x.schedules, 'schedule', 'schedules') + ' (' + how + '; the space is larger)';
    }
    if (x.runs > x.schedules) { line += '; ' + x.runs + ' runs in all'; }
    return line;
  }

  // A scenario's recent runs (its history): what a failure is, the pass rate, and a strip of
  // the outcomes kept, oldest first, each with its time and failure in the tooltip.
  var STANDING = { 'new': 'new failure', flake: 'known flake', repeat: 'repeat failure', first: 'first failure', unsure: 'new?' };
  function passRate(h) {
    return h.verdicts ? 'passed ' + h.passed + ' of the last ' + plural(h.verdicts, 'run', 'runs') + ' (' +
      Math.round(100 * h.passed / h.verdicts) + '%)' : 'no pass or failure on record yet';
  }
  function pastLine(p) {
    return p.at.replace('T', ' ').replace(/:\d\dZ$/, ' UTC') + '  ' + p.outcome +
      (p.verdict ? ' (' + p.verdict + ')' : '') + (p.failure ? ': ' + p.failure : '');
  }
  function historyBadge(h) {
    var title = (h.line ? h.line + '\n' : '') + passRate(h) + '\n' + h.recent.slice().reverse().map(pastLine).join('\n');
    var box = el('span', { 'class': 'history', 'data-history': h.standing || 'none', title: title });
    if (h.standing) {
      box.appendChild(el('span', { 'class': 'badge badge-' + h.standing, text: STANDING[h.standing] || h.standing }));
    }
    var strip = el('span', { 'class': 'strip' });
    h.recent.forEach(function (p) { strip.appendChild(el('span', { 'class': 'past past-' + p.outcome })); });
    box.appendChild(strip);
    if (h.verdicts) { box.appendChild(el('span', { 'class': 'rate', text: Math.round(100 * h.passed / h.verdicts) + '%' })); }
    return box;
  }
  function historyList(h) {
    var box = el('div', { 'class': 'history-detail' });
    box.appendChild(el('p', { 'class': 'history-summary', text: (h.line ? h.line + '; ' : '') + passRate(h) }));
    // Numbered from the oldest kept: this run has the highest number.
    var list = el('ol', { 'class': 'history-list', reversed: 'reversed' });
    h.recent.slice().reverse().forEach(function (p, i) {
      list.appendChild(el('li', { 'class': 'history-item history-' + p.outcome, text: pastLine(p) + (i === 0 ? ' (this run)' : '') }));
    });
    box.appendChild(list);
    return box;
  }

  var LANE_OF = { request: 'to-agent', response: 'to-product', event: 'to-product event' };

  // The run as a sequence diagram: product, forwarder and agent lanes; a request an arrow to
  // the agent, a response or an event one back, a product point a mark on the product's lane,
  // the model's answer to the agent (its progress) a mark on the agent's lane; a step released
  // at a decision numbered, with what else was held then.
  function sequence(x) {
    var box = el('div', { 'class': 'sequence', 'data-steps': String(x.steps.length) });
    var lanes = el('div', { 'class': 'seq-lanes' });
    ['product', 'forwarder', 'agent'].forEach(function (lane) {
      lanes.appendChild(el('span', { 'class': 'seq-lane-name seq-at-' + lane, text: lane }));
    });
    box.appendChild(el('div', { 'class': 'seq-head' }, [
      el('span', { 'class': 'seq-n', text: 'decision' }), lanes,
      el('span', { 'class': 'seq-label', text: 'released' }),
      el('span', { 'class': 'seq-held', text: 'also held then' })
    ]));
    x.steps.forEach(function (step) {
      var lanesOfStep = el('div', { 'class': 'seq-lanes' });
      if (step.kind === 'product') {
        lanesOfStep.appendChild(el('div', { 'class': 'seq-point', title: 'a pass of a product point' }));
      } else if (step.kind === 'model') {
        lanesOfStep.appendChild(el('div', { 'class': 'seq-progress', title: 'the model answers the agent: its progress' }));
      } else {
        lanesOfStep.appendChild(el('div', { 'class': 'seq-arrow ' + (LANE_OF[step.kind] || 'to-product') }));
        lanesOfStep.appendChild(el('div', { 'class': 'seq-hold', title: 'held at the forwarder' }));
      }
      var decided = step.decision != null;
      var label = el('span', { 'class': 'seq-label', text: step.label + (step.repeats ? ' ×' + (step.repeats + 1) : '') });
      if (step.deviated) { label.appendChild(el('span', { 'class': 'badge badge-deviated', text: 'not the default' })); }
      var held = el('span', { 'class': 'seq-held' });
      (step.held || []).forEach(function (h) { held.appendChild(el('span', { 'class': 'seq-held-step', text: h })); });
      var attrs = {
        'class': 'seq-step seq-' + step.kind + (decided ? ' decision' : '') + (step.deviated ? ' deviated' : ''),
        'data-kind': step.kind
      };
      if (decided) { attrs['data-decision'] = String(step.decision); }
      box.appendChild(el('div', attrs, [
        el('span', { 'class': 'seq-n', text: decided ? String(step.decision) : '' }), lanesOfStep, label, held
      ]));
    });
    if (x.steps_left_out) {
      box.appendChild(el('div', { 'class': 'seq-left-out', text: plural(x.steps_left_out, 'step', 'steps') +
        ' without a decision not shown (a run this long shows its first steps and every decision)' }));
    }
    return box;
  }

  function exploration(s) {
    var x = s.exploration;
    x.steps = x.steps || [];
    var box = el('div', { 'class': 'exploration' });
    box.appendChild(el('p', { 'class': 'exploration-summary', text: explorationSummary(x) }));
    if (x.diverged) { box.appendChild(el('pre', { 'class': 'exploration-diverged failure', text: x.diverged })); }
    if (x.replay_command) {
      var command = el('code', { 'class': 'replay-command', text: x.replay_command });
      var copy = el('button', { type: 'button', 'class': 'copy', text: 'copy' });
      copy.addEventListener('click', function (event) {
        event.stopPropagation();
        var range = document.createRange();
        range.selectNodeContents(command);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        var done = function () { copy.textContent = 'copied'; };
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(x.replay_command).then(done, function () {
            if (document.execCommand('copy')) { done(); }
          });
        } else if (document.execCommand('copy')) { done(); }
      });
      box.appendChild(el('div', { 'class': 'replay' }, [el('span', { text: 'replay it: ' }), command, copy]));
    }
    if (x.steps.length) {
      var which = x.failed ? 'the failing run' + (x.schedule ? ', under ' + x.schedule : '') : 'the last run';
      box.appendChild(el('h4', { text: 'Sequence of ' + which }));
      box.appendChild(sequence(x));
      box.appendChild(el('p', { 'class': 'seq-legend', text: 'a request goes from the product to the agent, a response and an event (dashed) come back; ' +
        'the forwarder holds each (○) until the system is quiet; a product point is a mark (◆) on the product\'s lane; ' +
        'the model\'s answer to the agent is a mark (●) on the agent\'s lane, after which nothing goes until the agent settled. ' +
        'Numbered: released at a decision (several steps held); highlighted: not the default (oldest) choice.' }));
    }
    return box;
  }

  function verdict(v) {
    var box = el('div', { 'class': 'verdict' });
    box.appendChild(el('p', { 'class': 'verdict-summary', text: v.summary }));
    var list = el('ol', { 'class': 'verdict-runs' });
    v.runs.forEach(function (r) {
      var item = el('li', { 'class': 'outcome-' + r.outcome, text: r.outcome + ' in ' + ms(r.duration_ms) });
      if (r.failure) { item.appendChild(el('pre', { 'class': 'failure', text: r.failure })); }
      list.appendChild(item);
    });
    box.appendChild(list);
    return box;
  }

  function details(s) {
    var box = el('div', { 'class': 'details' });
    if (s.failure) { box.appendChild(section('Failure', el('pre', { 'class': 'failure', text: s.failure }))); }
    if (s.reason) { box.appendChild(section('Reason', el('pre', { text: s.reason }))); }
    if (s.history) { box.appendChild(section('History', historyList(s.history))); }
    if (s.usage) { box.appendChild(section('Usage', usage(s.usage))); }
    if (s.exploration) { box.appendChild(section('Exploration', exploration(s))); }
    if (s.verdict) { box.appendChild(section('Verdict over ' + s.verdict.runs.length + ' runs', verdict(s.verdict))); }
    if (s.entries.length) {
      box.appendChild(section('Timeline', timeline(s)));
      box.appendChild(section('In order', entryTable(s)));
    }
    if (s.snapshot) {
      var pre = el('pre', { 'class': 'diff' });
      diff(s.snapshot.accepted, s.snapshot.new).forEach(function (d) {
        var prefix = d[0] === 'add' ? '+ ' : d[0] === 'del' ? '- ' : '  ';
        pre.appendChild(el('span', { 'class': d[0], text: prefix + d[1] + '\n' }));
      });
      box.appendChild(section('Snapshot diff: ' + s.snapshot.file + ' (- accepted, + new)', pre));
    }
    if (s.evidence && s.evidence.length) {
      var text = s.evidence.map(function (kv) { return kv[0] + ': ' + JSON.stringify(kv[1], null, 2); }).join('\n');
      box.appendChild(section('Evidence as recorded', el('pre', { 'class': 'evidence', text: text })));
    }
    (s.kept_roots || []).forEach(function (k) {
      box.appendChild(section('Kept root: ' + k.path, el('pre', { 'class': 'log-tail', text: k.log_tail || '(no server output)' })));
    });
    return box;
  }

  var tbody = document.querySelector('#scenarios tbody');
  var rows = [];
  data.scenarios.forEach(function (s, index) {
    s.entries = s.entries || [];
    var note = s.failure ? s.failure.split('\n')[0] : (s.reason || '');
    var nameCell = el('td', { 'class': 'name', text: s.name });
    if (s.exploration) {
      nameCell.appendChild(el('span', { 'class': 'badge badge-explored', title: explorationSummary(s.exploration), text: 'explored' }));
    }
    var attrs = { 'class': 'scenario', 'data-outcome': s.outcome, 'data-name': s.name, 'data-index': index };
    if (s.exploration) { attrs['data-explored'] = s.exploration.failed ? 'failed' : 'passed'; }
    var outcomeCell = el('td', { 'class': 'outcome outcome-' + s.outcome, text: s.outcome });
    if (s.history) { outcomeCell.appendChild(historyBadge(s.history)); }
    var row = el('tr', attrs, [
      nameCell,
      outcomeCell,
      el('td', { 'class': 'duration', text: ms(s.duration_ms) }),
      el('td', { text: s.agent }),
      el('td', { text: s.isolation }),
      el('td', { text: s.model }),
      el('td', { 'class': 'note', text: note, title: note })
    ]);
    var detail = null;
    var toggle = function () {
      if (!detail) {
        detail = el('tr', { 'class': 'detail' }, [el('td', { colspan: '7' }, [details(s)])]);
        row.parentNode.insertBefore(detail, row.nextSibling);
      } else {
        detail.classList.toggle('hidden');
      }
    };
    row.addEventListener('click', toggle);
    tbody.appendChild(row);
    rows.push({ row: row, s: s, detail: function () { return detail; }, open: toggle });
  });
  // A failure opens on its timeline, as the first few failures of a run.
  rows.filter(function (r) { return r.s.outcome === 'failed'; }).slice(0, 3).forEach(function (r) { r.open(); });

  var outcomeFilter = document.getElementById('outcome-filter');
  var nameFilter = document.getElementById('name-filter');
  var exploredFilter = document.getElementById('explored-filter');
  var anyExplored = rows.some(function (r) { return r.s.exploration; });
  exploredFilter.parentNode.classList.toggle('hidden', !anyExplored);
  function applyFilters() {
    var outcome = outcomeFilter.value, name = nameFilter.value.toLowerCase(), shown = 0;
    var explored = exploredFilter.checked;
    rows.forEach(function (r) {
      var visible = (!outcome || r.s.outcome === outcome) && r.s.name.toLowerCase().indexOf(name) >= 0 &&
        (!explored || !!r.s.exploration);
      r.row.classList.toggle('hidden', !visible);
      var d = r.detail();
      if (d && !visible) { d.classList.add('hidden'); }
      if (visible) { shown++; }
    });
    document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' shown';
  }
  outcomeFilter.addEventListener('change', applyFilters);
  nameFilter.addEventListener('input', applyFilters);
  exploredFilter.addEventListener('change', applyFilters);
  applyFilters();
  document.body.setAttribute('data-rendered', String(rows.length));
})();
