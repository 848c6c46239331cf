// aedes (https://github.com/moscajs/aedes) on 127.0.0.1:PORT for the live broker tests
// (tests/brokers.py). Ends when its parent closes our stdin, so it never outlives the tests.
import net from 'node:net'
import { Aedes } from 'aedes'

const port = Number(process.argv[2])
const aedes = await Aedes.createBroker()
const server = net.createServer(aedes.handle)
server.listen(port, '127.0.0.1', () => console.log('ready'))
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
