// Every test process fetches through the HTTP client Calgate's processes use (src/http-client.ts):
// test helpers that talk to CalDAV servers and emulators with `fetch` are otherwise exposed to the
// bundled client's crash when a server closes the connection before a body is read.
import { installHttpClient } from '../src/http-client.ts';

installHttpClient();
