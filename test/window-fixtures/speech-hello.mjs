#!/usr/bin/env node
/**
 * A speech-to-text "engine" for the window's media test (config `speech:
 * { type: 'command', args: [this file, '{file}'] }`): it checks the audio file
 * it is handed exists, and prints the same transcript for any of them.
 */
import { statSync } from 'node:fs';

statSync(process.argv[2]);
process.stdout.write('hello from the walk\n');
