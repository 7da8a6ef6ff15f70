import { Agent } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * A KubeConfig whose API calls reuse keep-alive connections. @kubernetes/client-node 1.4 builds a new
 * https.Agent for every request (KubeConfig.createAgent), so every call pays a TCP + TLS handshake; on a
 * busy scheduler that handshake is most of the cost of a bind. Here the agent is created once per distinct
 * set of agent options (proxies and plain HTTP keep the library's behaviour); as many sockets as calls in
 * flight, up to 256 of them kept idle. Changes and returns `kc`.
 */
export function keepAliveKubeConfig(kc: KubeConfig): KubeConfig {
  const cluster = kc.getCurrentCluster();
  if (!cluster || cluster.proxyUrl || !cluster.server.startsWith('https')) return kc;
  const agents = new Map<string, Agent>();
  const target = kc as unknown as { createAgent: (cluster: unknown, options: Record<string, unknown>) => unknown };
  target.createAgent = (_cluster: unknown, options: Record<string, unknown>): Agent => {
    const key = JSON.stringify(
      Object.entries(options)
        .filter(([name, value]) => value !== undefined && !['ca', 'cert', 'key', 'pfx'].includes(name))
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
    let agent = agents.get(key);
    if (!agent) {
      // No maxSockets cap: a request queued behind a busy keep-alive socket trips node-fetch 2's chunked
      // end detection (node-fetch#1767) and fails with "Premature close" though the server answered.
      agent = new Agent({ ...options, keepAlive: true, maxFreeSockets: 256 });
      agents.set(key, agent);
    }
    return agent;
  };
  return kc;
}
