import { defineChaosSuite } from './chaos/suite';

defineChaosSuite('irc');
