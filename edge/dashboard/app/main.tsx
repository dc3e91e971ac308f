// The dashboard's entry point: the style sheet and the application, rendered into the shell.
import './app.css';
import { render } from 'preact';
import { App } from './app.tsx';

const root = document.getElementById('root');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
