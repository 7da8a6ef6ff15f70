// A torchrun-style rendezvous, as the k8s tests run it in each "pod" of a REST job: replica NODE_RANK 0
// listens on MASTER_ADDR:MASTER_PORT (the address its peers resolve it to), every other replica connects
// there (retrying while the name or the listener is not there yet, as torch's TCPStore does) and says who
// it is; once all NNODES replicas are in, the master sends everyone the roster. Prints one JSON line:
// { rank, hostname, master, roster }. Exits 1 after QM_RENDEZVOUS_TIMEOUT_MS (60 s) without a full roster.
import dns from 'node:dns';
import net from 'node:net';

const env = (name) => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
};
const [master, port, nnodes, rank] = [env('MASTER_ADDR'), Number(env('MASTER_PORT')), Number(env('NNODES')), Number(env('NODE_RANK'))];
const me = { rank, hostname: env('HOSTNAME'), worldSize: Number(env('WORLD_SIZE')), localWorldSize: Number(env('LOCAL_WORLD_SIZE')) };
const deadline = Date.now() + Number(process.env.QM_RENDEZVOUS_TIMEOUT_MS ?? 60_000);
const done = (roster, masterIp) => {
  process.stdout.write(`${JSON.stringify({ ...me, master, masterIp, roster })}\n`);
  process.exit(0);
};
setTimeout(() => {
  process.stderr.write(`rank ${rank}: no full roster before the deadline\n`);
  process.exit(1);
}, deadline - Date.now()).unref();

const lines = (socket, onLine) => {
  let buffer = '';
  socket.on('data', (chunk) => {
    buffer += chunk;
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      onLine(JSON.parse(buffer.slice(0, i)));
      buffer = buffer.slice(i + 1);
    }
  });
};

async function lookupMaster() {
  for (;;) {
    try {
      return await new Promise((resolve, reject) => dns.lookup(master, (error, address) => (error ? reject(error) : resolve(address))));
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

if (rank === 0) {
  // Listen where the peers will look: the address MASTER_ADDR resolves to (this pod's).
  const ip = await lookupMaster();
  const peers = new Map([[0, me]]);
  const sockets = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    lines(socket, (hello) => {
      peers.set(hello.rank, hello);
      if (peers.size === nnodes) {
        const roster = [...peers.values()].sort((a, b) => a.rank - b.rank);
        for (const s of sockets) s.end(`${JSON.stringify(roster)}\n`);
        server.close();
        done(roster, ip);
      }
    });
  });
  server.listen(port, ip);
  if (nnodes === 1) done([me], ip);
} else {
  for (;;) {
    try {
      const ip = await lookupMaster();
      const roster = await new Promise((resolve, reject) => {
        const socket = net.connect(port, master);
        socket.on('error', reject);
        socket.on('connect', () => socket.write(`${JSON.stringify(me)}\n`));
        lines(socket, resolve);
      });
      done(roster, ip);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
