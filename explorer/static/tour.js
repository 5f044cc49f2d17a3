// The three-step walkthrough of the simple start (a teacher can replay it in front of a class): one card at a time
// beside what it points at; Next, Back, Skip (or Escape). window.lxTour() starts it.
window.lxTour = () => {
  const steps = [
    ['#score-examples', 'Score a sentence', 'Press an example (or type your own text and press Score): each token is coloured by how much the model expected it, blue expected, orange and red surprising.'],
    ['#heatmap', 'Click the most surprising token', 'Click the reddest token (or use “Most surprising”): the card shows what the model expected there instead, with its odds.'],
    ['#next-token', 'Change the temperature', 'Drag or type a temperature, then press “Draw 10 samples”: at 0 the model always picks its likeliest token; higher temperatures spread the choice.'],
  ];
  let i = 0;
  let card = document.getElementById('lx-tour');
  if (!card) {
    card = document.createElement('div');
    card.id = 'lx-tour';
    card.setAttribute('role', 'dialog');
    card.setAttribute('aria-modal', 'false');
    card.setAttribute('aria-labelledby', 'lx-tour-title');
    card.innerHTML = '<p class="lx-tour-n"></p><h2 id="lx-tour-title"></h2><p class="lx-tour-body"></p>' +
      '<div class="lx-tour-buttons"><button type="button" data-go="back">Back</button>' +
      '<button type="button" data-go="next">Next</button><button type="button" data-go="skip">Skip</button></div>';
    document.body.appendChild(card);
  }
  const off = () => document.querySelectorAll('.lx-tour-target').forEach((e) => e.classList.remove('lx-tour-target'));
  const close = () => { off(); card.hidden = true; document.removeEventListener('keydown', esc); };
  const esc = (e) => { if (e.key === 'Escape') close(); };
  const show = () => {
    off();
    const [sel, title, body] = steps[i];
    card.querySelector('.lx-tour-n').textContent = 'Step ' + (i + 1) + ' of ' + steps.length;
    card.querySelector('h2').textContent = title;
    card.querySelector('.lx-tour-body').textContent = body;
    card.querySelector('[data-go=back]').disabled = i === 0;
    card.querySelector('[data-go=next]').textContent = i === steps.length - 1 ? 'Done' : 'Next';
    const target = document.querySelector(sel);
    if (target && target.offsetParent !== null) {
      target.classList.add('lx-tour-target');
      target.scrollIntoView({block: 'center', behavior: 'instant'});
    }
    card.hidden = false;
    card.querySelector('[data-go=next]').focus();
  };
  card.onclick = (e) => {
    const go = e.target.dataset && e.target.dataset.go;
    if (go === 'skip' || (go === 'next' && i === steps.length - 1)) return close();
    if (go === 'next') i += 1;
    if (go === 'back') i = Math.max(0, i - 1);
    if (go) show();
  };
  document.addEventListener('keydown', esc);
  show();
};
