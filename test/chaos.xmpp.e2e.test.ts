import { defineChaosSuite } from './chaos/suite';

defineChaosSuite('xmpp');
