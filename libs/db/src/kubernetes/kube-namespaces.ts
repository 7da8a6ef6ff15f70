import type { SqlHandle } from '../scheduling/sql-handle.js';

/** A namespace of the cluster as the scheduler saw it. */
export interface KubeNamespaceRow {
  name: string;
  /** Its pod-security.kubernetes.io/enforce label (null: none). */
  podSecurity: string | null;
}

/**
 * What the scheduler in Kubernetes mode published about the cluster (null: no scheduler in Kubernetes mode has,
 * e.g. standalone mode): Quartermaster's own namespace, whether it creates a team's missing namespace, and the
 * namespaces that exist.
 */
export interface KubeClusterFacts {
  ownNamespace: string | null;
  createNamespaces: boolean;
  namespaces: Map<string, string | null>;
}

/** Kubernetes mode's facts about the cluster that the API reads (the scheduler writes them). */
export class KubeNamespacesRepository {
  constructor(private readonly db: SqlHandle) {}

  /** This scheduler runs in Kubernetes mode, from `ownNamespace`, creating missing team namespaces or not. */
  async publish(facts: { ownNamespace: string | null; createNamespaces: boolean }): Promise<void> {
    await this.db.pool.query(
      `INSERT INTO kube_cluster (id, own_namespace, create_namespaces, updated_at) VALUES (1, $1, $2, now())
       ON CONFLICT (id) DO UPDATE SET own_namespace = EXCLUDED.own_namespace, create_namespaces = EXCLUDED.create_namespaces, updated_at = now()`,
      [facts.ownNamespace, facts.createNamespaces],
    );
  }

  /** The namespaces of a full list: those present are kept or added, the others removed (one transaction). */
  async replaceAll(namespaces: readonly KubeNamespaceRow[]): Promise<void> {
    await this.db.pool.query(
      `WITH present AS (SELECT * FROM unnest($1::text[], $2::text[]) AS p(name, pod_security)),
            gone AS (DELETE FROM kube_namespaces k WHERE NOT EXISTS (SELECT 1 FROM present p WHERE p.name = k.name))
       INSERT INTO kube_namespaces (name, pod_security) SELECT name, pod_security FROM present
       ON CONFLICT (name) DO UPDATE SET pod_security = EXCLUDED.pod_security
         WHERE kube_namespaces.pod_security IS DISTINCT FROM EXCLUDED.pod_security`,
      [namespaces.map((n) => n.name), namespaces.map((n) => n.podSecurity)],
    );
  }

  async upsert(namespace: KubeNamespaceRow): Promise<void> {
    await this.db.pool.query(
      `INSERT INTO kube_namespaces (name, pod_security) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET pod_security = EXCLUDED.pod_security`,
      [namespace.name, namespace.podSecurity],
    );
  }

  async remove(name: string): Promise<void> {
    await this.db.pool.query('DELETE FROM kube_namespaces WHERE name = $1', [name]);
  }

  /** What the scheduler published; null when it runs in no Kubernetes mode. */
  async facts(): Promise<KubeClusterFacts | null> {
    const { rows } = await this.db.pool.query<{ own_namespace: string | null; create_namespaces: boolean; names: string[]; levels: (string | null)[] }>(
      `SELECT c.own_namespace, c.create_namespaces,
              ARRAY(SELECT name FROM kube_namespaces ORDER BY name) AS names,
              ARRAY(SELECT pod_security FROM kube_namespaces ORDER BY name) AS levels
       FROM kube_cluster c WHERE c.id = 1`,
    );
    const row = rows[0];
    if (row === undefined) return null;
    return {
      ownNamespace: row.own_namespace,
      createNamespaces: row.create_namespaces,
      namespaces: new Map(row.names.map((name, i) => [name, row.levels[i] ?? null])),
    };
  }
}
