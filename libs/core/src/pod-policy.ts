/**
 * What a team's pod templates may reach in Kubernetes: the ServiceAccounts its pods run as, the Secrets,
 * ConfigMaps and PersistentVolumeClaims they mount (image pull secrets are Secrets), the NFS servers and the
 * taints they tolerate. An infra lead lists each per team; an empty list allows none, and `*` allows any.
 * Pure: the API asks it before a job is stored, so a template that names anything else is a 400 naming the
 * field, and nothing is created.
 */

/** One team's allow-lists. Each entry a name (for tolerations, a taint key), or `*` for any. */
export interface PodPolicy {
  serviceAccounts: readonly string[];
  secrets: readonly string[];
  configMaps: readonly string[];
  persistentVolumeClaims: readonly string[];
  nfsServers: readonly string[];
  tolerations: readonly string[];
}

export const POD_POLICY_FIELDS = ['serviceAccounts', 'secrets', 'configMaps', 'persistentVolumeClaims', 'nfsServers', 'tolerations'] as const;

/** Entry that allows anything of its kind. */
export const ANY = '*';

/** A policy that allows nothing: a team's until an admin lists something. */
export const EMPTY_POD_POLICY: PodPolicy = { serviceAccounts: [], secrets: [], configMaps: [], persistentVolumeClaims: [], nfsServers: [], tolerations: [] };

/** The parts of a pod template the policy looks at (the API's template as submitted, or as stored). */
export interface PolicedTemplate {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  imagePullSecrets?: readonly string[];
  volumes?: ReadonlyArray<{
    persistentVolumeClaim?: { claimName?: string };
    configMap?: { name?: string };
    secret?: { secretName?: string };
    nfs?: { server?: string };
  }>;
  tolerations?: ReadonlyArray<{ key?: string; operator?: string }>;
}

export interface PodPolicyRefusal {
  /** The template field refused, e.g. `template.volumes[2].secret.secretName`. */
  field: string;
  message: string;
}

const allows = (list: readonly string[], name: string): boolean => list.includes(ANY) || list.includes(name);
/** Host names compare without case (`NFS.example.com` is `nfs.example.com`). */
const allowsHost = (list: readonly string[], host: string): boolean => list.includes(ANY) || list.some((h) => h.toLowerCase() === host.toLowerCase());

function refusal(field: string, what: string, name: string, list: readonly string[], listName: keyof PodPolicy): PodPolicyRefusal {
  const allowed = list.length === 0 ? `the team's podPolicy.${listName} is empty, so none is allowed` : `the team's podPolicy.${listName} allows ${list.join(', ')}`;
  return { field, message: `${what} ${name} is not allowed for this team (${allowed}); an admin can add it with PATCH /v1/teams/{team}` };
}

/** Every part of `template` that `policy` does not allow, in template order; empty when it is allowed. */
export function podPolicyRefusals(template: PolicedTemplate, policy: PodPolicy): PodPolicyRefusal[] {
  const out: PodPolicyRefusal[] = [];
  const sa = template.serviceAccountName;
  if (sa !== undefined && !allows(policy.serviceAccounts, sa)) {
    out.push(refusal('template.serviceAccountName', 'ServiceAccount', sa, policy.serviceAccounts, 'serviceAccounts'));
  }
  if (template.automountServiceAccountToken === true && sa === undefined) {
    out.push({
      field: 'template.automountServiceAccountToken',
      message: "needs template.serviceAccountName (one the team's podPolicy.serviceAccounts allows): the namespace's default ServiceAccount's token is never mounted",
    });
  }
  (template.imagePullSecrets ?? []).forEach((name, i) => {
    if (!allows(policy.secrets, name)) out.push(refusal(`template.imagePullSecrets[${i}]`, 'Secret', name, policy.secrets, 'secrets'));
  });
  (template.volumes ?? []).forEach((v, i) => {
    const at = `template.volumes[${i}]`;
    const secret = v.secret?.secretName ?? '';
    const configMap = v.configMap?.name ?? '';
    const claim = v.persistentVolumeClaim?.claimName ?? '';
    const server = v.nfs?.server ?? '';
    if (v.secret && !allows(policy.secrets, secret)) out.push(refusal(`${at}.secret.secretName`, 'Secret', secret, policy.secrets, 'secrets'));
    if (v.configMap && !allows(policy.configMaps, configMap)) out.push(refusal(`${at}.configMap.name`, 'ConfigMap', configMap, policy.configMaps, 'configMaps'));
    if (v.persistentVolumeClaim && !allows(policy.persistentVolumeClaims, claim)) {
      out.push(refusal(`${at}.persistentVolumeClaim.claimName`, 'PersistentVolumeClaim', claim, policy.persistentVolumeClaims, 'persistentVolumeClaims'));
    }
    if (v.nfs && !allowsHost(policy.nfsServers, server)) out.push(refusal(`${at}.nfs.server`, 'NFS server', server, policy.nfsServers, 'nfsServers'));
  });
  (template.tolerations ?? []).forEach((t, i) => {
    const key = t.key ?? '';
    // An empty key with operator Exists tolerates every taint: only a policy that allows any taint allows it.
    if (key === '' ? !policy.tolerations.includes(ANY) : !allows(policy.tolerations, key)) {
      out.push(refusal(`template.tolerations[${i}].key`, 'a toleration of taint', key === '' ? '(every taint)' : key, policy.tolerations, 'tolerations'));
    }
  });
  return out;
}
