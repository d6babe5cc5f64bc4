import {
  decodeFrame,
  encodeFrame,
  isFinal,
  TurnFrameDecodeError,
  type TurnFrame,
} from './turn-stream.frames';

describe('turn stream frames', () => {
  const frames: TurnFrame[] = [
    { event: 'player', data: { action: { id: 'a-1', type: 'do', text: 'open the door' } } },
    { event: 'reset', data: {} },
    { event: 'reasoning', data: { text: 'the door is locked' } },
    { event: 'chunk', data: { text: 'The door creaks.\n' } },
    { event: 'message', data: { text: 'HP 3', visibleTo: ['p-1'] } },
    {
      event: 'notice',
      data: { text: 'Dice failed; the turn went on without it.', scriptId: 's-1', hook: 'output' },
    },
    {
      event: 'done',
      data: { action: { id: 'n-1', type: 'ai', text: 'It opens.' }, turnId: 't-1', version: 3 },
    },
    { event: 'error', data: { code: 'cancelled', message: 'cancelled', cancelled: true } },
    { event: 'stopped', data: { message: 'a script ended the turn' } },
  ];

  it.each(frames.map((frame) => [frame.event, frame]))(
    'given a %s frame, when encoded and decoded, then it is the same frame',
    (_name, frame) => {
      const { event, data } = encodeFrame(frame);
      expect(event).toBe(frame.event);
      expect(data).not.toContain('\n'); // one SSE data line
      expect(decodeFrame(event, data)).toEqual(frame);
    },
  );

  it('given a name the union does not hold, or data that is not JSON, then decoding refuses', () => {
    expect(() => decodeFrame('surprise', '{}')).toThrow(TurnFrameDecodeError);
    expect(() => decodeFrame(undefined, '{}')).toThrow(/unknown turn stream frame/);
    expect(() => decodeFrame('chunk', '{"text":')).toThrow(/not JSON/);
  });

  it('ends the stream on done, error and stopped only', () => {
    expect(frames.filter((frame) => isFinal(frame.event)).map((f) => f.event)).toEqual([
      'done',
      'error',
      'stopped',
    ]);
  });
});
