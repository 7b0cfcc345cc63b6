// Short synthesized sounds (no audio files to download). Browsers only allow audio after
// a gesture, so the context is created on the first tap or key press.

import { load, save } from "./storage.js";

function tone(context, { type = "sine", from, to = from, duration, volume = 0.2, delay = 0 }) {
  const start = context.currentTime + delay;
  const osc = context.createOscillator();
  const gain = context.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(from, start);
  osc.frequency.exponentialRampToValueAtTime(to, start + duration);
  gain.gain.setValueAtTime(volume, start);
  gain.gain.exponentialRampToValueAtTime(0.001, start + duration);
  osc.connect(gain).connect(context.destination);
  osc.start(start);
  osc.stop(start + duration + 0.02);
}

function noise(context, { duration, volume = 0.3, frequency = 1800, delay = 0 }) {
  const start = context.currentTime + delay;
  const length = Math.ceil(context.sampleRate * duration);
  const buffer = context.createBuffer(1, length, context.sampleRate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < length; i += 1) data[i] = (Math.random() * 2 - 1) * (1 - i / length);
  const source = context.createBufferSource();
  const filter = context.createBiquadFilter();
  const gain = context.createGain();
  source.buffer = buffer;
  filter.type = "bandpass";
  filter.frequency.value = frequency;
  gain.gain.value = volume;
  source.connect(filter).connect(gain).connect(context.destination);
  source.start(start);
}

const SOUNDS = {
  flip: (context) => noise(context, { duration: 0.07, volume: 0.35, frequency: 2500 }),
  slap: (context) => {
    noise(context, { duration: 0.12, volume: 0.6, frequency: 900 });
    tone(context, { type: "triangle", from: 180, to: 60, duration: 0.12, volume: 0.35 });
  },
  jack: (context) => tone(context, { type: "square", from: 880, to: 1320, duration: 0.09, volume: 0.08 }),
  take: (context) => {
    tone(context, { from: 523, duration: 0.09, volume: 0.15 });
    tone(context, { from: 784, duration: 0.14, volume: 0.15, delay: 0.08 });
  },
  wrong: (context) => tone(context, { type: "sawtooth", from: 160, to: 90, duration: 0.3, volume: 0.12 }),
  late: (context) => tone(context, { from: 440, to: 330, duration: 0.15, volume: 0.1 }),
  turn: (context) => tone(context, { from: 660, duration: 0.06, volume: 0.08 }),
  win: (context) => {
    [523, 659, 784, 1047].forEach((f, i) => tone(context, { type: "triangle", from: f, duration: 0.22, volume: 0.16, delay: i * 0.11 }));
  },
};

// The page's sounds: muted or not (remembered on this device), and the audio context, which
// exists only once a tap or key press has allowed it.
export function createSound() {
  let context = null;
  let muted = load("muted", false);
  return {
    isMuted: () => muted,
    setMuted(value) {
      muted = Boolean(value);
      save("muted", muted);
    },
    unlock() {
      if (context) {
        if (context.state === "suspended") context.resume();
        return;
      }
      const AudioContext = window.AudioContext || window.webkitAudioContext;
      if (AudioContext) context = new AudioContext();
    },
    play(name) {
      if (muted || !context || context.state !== "running" || !SOUNDS[name]) return;
      try {
        SOUNDS[name](context);
      } catch {
        // audio is a nicety; never let it break the game
      }
    },
  };
}
