// Stands in for the cluster's DNS (CoreDNS's kubernetes plugin) in a process the k8s tests run as a pod:
// `<hostname>.<service>[.<namespace>.svc[.cluster.local]]` resolves to the address of the endpoint with that
// hostname in the Service's EndpointSlices, read from the test API server (KUBECONFIG). The pod's own
// namespace (its resolv.conf search path) comes from QM_TEST_POD_NAMESPACE. Other names resolve as usual.
// Loaded with `node --import`; it replaces dns.lookup, which net.connect uses.
// The "pod network": pods get addresses in 10.0.0.0/8 (EndpointSlices refuse loopback ones); every pod runs
// on this host, so the fake CNI routes pod address 10.a.b.c to 127.a.b.c, where its process listens.
const toHost = (podIp) => podIp.replace(/^10\./, '127.');
import dns from 'node:dns';
import { DiscoveryV1Api, KubeConfig } from '@kubernetes/client-node';

const kc = new KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG);
const discovery = kc.makeApiClient(DiscoveryV1Api);
const CLUSTER_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)(?:\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(?:\.cluster\.local)?)?\.?$/;

async function resolveInCluster(name) {
  const m = CLUSTER_NAME.exec(name);
  if (!m) return undefined;
  const [hostname, service, namespace] = [m[1], m[3], m[5] ?? process.env.QM_TEST_POD_NAMESPACE];
  const slices = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: `kubernetes.io/service-name=${service}` });
  for (const slice of slices.items) {
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.hostname === hostname && endpoint.addresses?.length) return toHost(endpoint.addresses[0]);
    }
  }
  return null;
}

const original = dns.lookup;
dns.lookup = function lookup(hostname, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  const opts = typeof options === 'function' || options === undefined ? {} : typeof options === 'number' ? { family: options } : options;
  resolveInCluster(hostname).then(
    (address) => {
      if (address === undefined) return original.call(dns, hostname, opts, cb);
      if (address === null) {
        const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
        return cb(error);
      }
      if (opts.all) return cb(null, [{ address, family: 4 }]);
      return cb(null, address, 4);
    },
    (error) => cb(Object.assign(new Error(`cluster DNS: ${error.message}`), { code: 'EAI_AGAIN', hostname })),
  );
};
