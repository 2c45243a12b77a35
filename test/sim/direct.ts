// A KubeApi straight onto the simulation's apiserver, for suite tests that need an apiserver's semantics but no
// scheduling: every request is answered at once, bodies cross as JSON, failures come back as ApiError.
import { ApiError, type KubeApi } from '../../runtime/kube/client.js';
import type { ApiServer, Obj, ServerWatch, Status } from './apiserver.js';

export function directClient(server: ApiServer, actor = 'controller'): KubeApi {
  const request = <T>(method: string, p: string, opts: Parameters<KubeApi['request']>[2] = {}): Promise<T> => {
    const res = server.handle(actor, {
      method,
      path: p,
      ...(opts.query ? { query: opts.query } : {}),
      ...(opts.body !== undefined ? { body: JSON.parse(JSON.stringify(opts.body)) } : {}),
      ...(opts.contentType ? { contentType: opts.contentType } : {}),
    });
    if (res.code >= 300) {
      const s = res.body as Status;
      return Promise.reject(new ApiError(res.code, s.reason, s.message));
    }
    return Promise.resolve(JSON.parse(JSON.stringify(res.body)) as T);
  };
  return { request } as KubeApi;
}

/**
 * A KubeApi onto the apiserver whose watches deliver what happened only on `deliver()`: the caches lag. A
 * streaming list's initial events (up to its end bookmark) arrive at once, as the caches' first sync.
 */
export function laggingClient(server: ApiServer): { client: KubeApi; deliver: () => void } {
  const streams: { w: ServerWatch; onEvent: (type: string, object: never) => void }[] = [];
  const watch: KubeApi['watch'] = (path, query, onEvent, signal) => {
    const w = server.watch(path, query);
    const end = w.queue.findIndex(
      (e) => (e.object as Obj).metadata.annotations?.['k8s.io/initial-events-end'] === 'true',
    );
    for (const e of w.queue.splice(0, end + 1)) onEvent(e.type, e.object);
    streams.push({ w, onEvent });
    return new Promise((resolve) =>
      signal.addEventListener('abort', () => (server.closeWatch(w), resolve()), { once: true }),
    );
  };
  const deliver = (): void => {
    for (const s of streams)
      for (const e of s.w.queue.splice(0)) if (e.type !== 'BOOKMARK') s.onEvent(e.type, e.object as never);
  };
  return { client: { ...directClient(server), watch, fenceUp: () => true }, deliver };
}
