// A KubeApi straight onto the simulation's apiserver, for suite tests that need an apiserver's semantics but no
// scheduling: every request is answered at once, bodies cross as JSON, failures come back as ApiError.
import { ApiError, type KubeApi } from '../../runtime/kube/client.js';
import type { ApiServer, Status } from './apiserver.js';

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
