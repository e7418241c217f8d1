import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { HomingApi } from '../../shared/api';
import { App } from './App';
import { connectHoming } from './connect';
import './styles.css';

declare global {
  interface Window {
    homing: HomingApi;
  }
}

const { client, connection } = connectHoming();
window.homing = client.api;

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={client.api} connection={connection} />
  </StrictMode>,
);
