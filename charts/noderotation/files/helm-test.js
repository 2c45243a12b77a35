// `helm test`: the controller behind the metrics Service answers, and its watches have synced. Run by the
// controller image's node as `node -e <this file> <url>`; CommonJS, no dependencies. test/install runs it
// against a metrics server of its own.
const url = process.argv[1];
const fail = (why) => {
  console.error(`noderotation helm test: ${url}: ${why}`);
  process.exit(1);
};
fetch(url, { signal: AbortSignal.timeout(10000) })
  .then(async (res) => {
    if (res.status !== 200) fail(`HTTP ${res.status}`);
    const text = await res.text();
    const leader = /^noderotation_controller_leader(?:\{[^}]*\})? (\S+)$/m.exec(text);
    if (!leader) fail('no noderotation_controller_leader series: is this the noderotation controller?');
    const synced = [...text.matchAll(/^noderotation_controller_watch_synced(\{[^}]*\}) (\S+)$/gm)];
    if (synced.length === 0) fail('no noderotation_controller_watch_synced series');
    const behind = synced.filter((m) => Number(m[2]) !== 1).map((m) => m[1]);
    if (behind.length > 0) fail(`watches not synced: ${behind.join(' ')}`);
    console.log(`ok: ${synced.length} watches synced, leader=${leader[1]}`);
  })
  .catch((err) => fail(err instanceof Error ? err.message : String(err)));
