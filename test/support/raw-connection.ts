import { connect, type Socket } from 'node:net';

/** A raw TCP connection to 127.0.0.1:`port`: `send` writes to it; resolves with what the server sent once it closes the socket. */
export async function rawConnection(port: number, send: (socket: Socket) => void): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  socket.on('error', () => undefined);
  send(socket);
  return closed;
}
