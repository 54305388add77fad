import { CHANGE_FEED } from '@apikeys/api-types';
import type { Response } from 'express';

/** One Server-Sent Event: its JSON `data`, whose `type` is also the event's name. */
export interface StreamEvent {
  type: string;
}

/** The sending side of an event stream, as its owner sees it. */
export interface EventSink {
  /** Sends one event; returns false when the client has more than `CHANGE_FEED.maxUnreadBytes` unread. */
  send(event: StreamEvent): boolean;
  /** Ends the stream (and its connection: a stream is the last response on it). */
  end(): void;
}

/**
 * What a handler answers to stream events rather than send one JSON body: `open` is called once the stream's
 * headers are sent, with the sink to send through, and returns what to call when the client goes away.
 */
export class EventStream {
  constructor(readonly open: (sink: EventSink) => { onClientGone(): void }) {}
}

/**
 * Streams `stream` on `res` as Server-Sent Events (`text/event-stream`): `event: <type>`, `data: <JSON>`, blank line.
 * What the client has not read yet is what waits in the response and its socket (`res.writableLength`); past
 * `CHANGE_FEED.maxUnreadBytes`, `send` says so, and the owner ends the stream, which destroys the connection rather
 * than buffer more. The kernel's socket buffers come before that and are bounded by the kernel.
 */
export function sendEventStream(res: Response, stream: EventStream): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // Tells a buffering proxy (nginx) to pass each event on as it comes.
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  let open = true;
  const sink: EventSink = {
    send(event) {
      if (!open) {
        return true;
      }
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      return res.writableLength <= CHANGE_FEED.maxUnreadBytes;
    },
    end() {
      if (!open) {
        return;
      }
      open = false;
      // A client that does not read would never take the end of a response: its connection goes instead.
      if (res.writableLength > 0) {
        res.destroy();
      } else {
        res.end();
      }
    },
  };
  const { onClientGone } = stream.open(sink);
  res.once('close', () => {
    open = false;
    onClientGone();
  });
}
